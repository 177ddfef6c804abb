const CENSOR = '[redacted]';

/**
 * Replace every known secret value in a text we build (an error message, a log field) or a
 * log line. The logger masks secrets too, but an error message travels to the agent, past the
 * logger. Every secret is masked, however short (masking too much in a line is the safe way
 * to be wrong), both as it is and in the form JSON gives it in a log line (a quote, a
 * backslash or a control character escaped).
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (s === '') continue;
    if (out.includes(s)) out = out.split(s).join(CENSOR);
    const escaped = JSON.stringify(s).slice(1, -1);
    if (escaped !== s && out.includes(escaped)) out = out.split(escaped).join(CENSOR);
  }
  return out;
}

/** Cut a text for a message; the full text belongs in the log. */
export function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}... (${text.length - maxChars} more characters)`;
}

/** Field names whose values are credentials, wherever they sit in a logged object. */
const SENSITIVE_KEYS = new Set([
  'apikey',
  'api_key',
  'api-key',
  'x-api-key',
  'token',
  'password',
  'secret',
  'credentials',
  'authorization',
  'cookie',
  'serverkey',
]);

/**
 * A copy of `value` with every sensitive field blanked, at any depth (errors included, as
 * plain objects). Returns the value itself when nothing needed blanking, so clean log lines
 * cost no copy.
 */
export function redactFields(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const r = redactFields(item, depth + 1);
      if (r !== item) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  const isError = value instanceof Error;
  if (!isError && Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const r = SENSITIVE_KEYS.has(k.toLowerCase()) ? CENSOR : redactFields(v, depth + 1);
    if (r !== v) {
      out ??= isError ? { ...value, type: value.name, message: value.message, stack: value.stack } : { ...value };
      out[k] = r;
    }
  }
  return out ?? value;
}
