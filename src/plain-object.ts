/** A non-null, non-array object: the shape of a JSON object once parsed (keys still untrusted). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `o[key]` if `o` has it itself: a key named `toString` or `constructor` has no value a JSON object inherits. */
export function ownValue(o: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}
