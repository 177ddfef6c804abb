/** A non-null, non-array object: the shape of a JSON object once parsed (keys still untrusted). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `o[key]` if `o` has it itself: a key named `toString` or `constructor` has no value a JSON object inherits. */
export function ownValue(record: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
