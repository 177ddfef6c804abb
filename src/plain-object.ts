import { isLosslessNumber } from 'lossless-json';

/** A non-null, non-array object: the shape of a JSON object once parsed (keys still untrusted). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `o[key]` if `o` has it itself: a key named `toString` or `constructor` has no value a JSON object inherits. */
export function ownValue(record: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * A field read from JSON or YAML, as text: a string as it is, a number or boolean as String()
 * writes it, a JSON object or array as its JSON (String() would write "[object Object]"), null,
 * undefined or what JSON cannot hold as `fallback`.
 */
export function jsonText(value: unknown, fallback = ''): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // A number too long for a double, as a Dify plugin wrote it (dify-common/plugin-json.ts).
  if (isLosslessNumber(value)) return value.toString();
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return fallback;
}
