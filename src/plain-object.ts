/** A non-null, non-array object: the shape of a JSON object once parsed (keys still untrusted). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
