/**
 * JSON.parse keeps a `__proto__` key as an own property, and a later assignment or
 * Object.assign of it would swap an object's prototype: drop such keys from agent input.
 * The reviver costs, so only text that could spell the key pays for it: text that has it
 * literally, or has a `\u` escape (`"\u005f_proto__"` parses to the same key).
 */
export function parseAgentJson(text: string): unknown {
  return text.includes('__proto__') || text.includes('\\u') ? JSON.parse(text, dropProtoKeys) : JSON.parse(text);
}

function dropProtoKeys(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}
