/**
 * JSON.parse keeps a `__proto__` key as an own property, and a later assignment or
 * Object.assign of it would swap an object's prototype: drop such keys from agent input.
 * The reviver costs, so only text that could spell the key pays for it: text that has it
 * literally, or has a `\u` escape (`"\u005f_proto__"` parses to the same key). `plain`: the
 * caller already knows the text spells no such key (couldSpellProtoKey).
 */
export function parseAgentJson(text: string, plain = !couldSpellProtoKey(text)): unknown {
  if (plain) return JSON.parse(text);
  try {
    return JSON.parse(text, dropProtoKeys);
  } catch (err) {
    // The reviver recurses where the parser does not: deep nesting overflows the stack.
    if (err instanceof RangeError) throw new SyntaxError('JSON nested too deeply to read', { cause: err });
    throw err;
  }
}

/**
 * True when `text` has `__proto__` or a `\u` escape. A string parsed out of text that has
 * neither has neither too: the other escapes give a quote, a backslash, a slash or a control
 * character, none of them in `__proto__`, and a backslash they give is followed by a `u` only
 * where the text had `\\u`, which holds `\u`. So the JSON an envelope carries as a string
 * needs no scan of its own when the envelope needed none.
 */
export function couldSpellProtoKey(text: string): boolean {
  return text.includes('__proto__') || text.includes('\\u');
}

function dropProtoKeys(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}
