import { isLosslessNumber, isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * JSON a plugin wrote, read without losing digits: a number that a double cannot hold exactly
 * (an integer past 2^53, a decimal with more digits than a double keeps) stays its original
 * text, as a LosslessNumber, so the observation writes it as the plugin did. Dify's own agent
 * (Python) keeps such numbers exact; JSON.parse would round them. Other numbers are numbers.
 */
export function parsePluginJson(text: string): unknown {
  return parse(text, undefined, (value) => (isSafeNumber(value) ? Number(value) : new LosslessNumber(value)));
}

/** JSON text of a value read by parsePluginJson, its numbers as the plugin wrote them. */
export function stringifyPluginJson(value: unknown): string {
  return stringify(value) ?? 'null';
}

export { isLosslessNumber };
