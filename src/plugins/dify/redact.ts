/**
 * Replace every known secret value in a text we build (an error message, a log field).
 * The logger masks secrets too, but an error message travels to the agent, past the logger.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4 && out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}

/** Cut a text for a message; the full text belongs in the log. */
export function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}... (${text.length - maxChars} more characters)`;
}
