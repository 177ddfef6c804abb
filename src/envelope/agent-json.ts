/**
 * JSON.parse keeps a `__proto__` key as an own property, and a later assignment or
 * Object.assign of it would swap an object's prototype: drop such keys from agent input.
 * The reviver costs, so only text that could spell the key pays for it: text that has it
 * literally, or has a `\u` escape (`"\u005f_proto__"` parses to the same key).
 */
export function parseAgentJson(text: string): unknown {
  if (!text.includes('__proto__') && !text.includes('\\u')) return JSON.parse(text);
  try {
    return JSON.parse(text, dropProtoKeys);
  } catch (err) {
    // The reviver recurses where the parser does not: deep nesting overflows the stack.
    if (err instanceof RangeError) throw new SyntaxError('JSON nested too deeply to read', { cause: err });
    throw err;
  }
}

function dropProtoKeys(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}
