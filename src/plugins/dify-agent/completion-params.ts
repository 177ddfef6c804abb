import type { LlmInvocation } from './llm-invocation.js';

type Json = Record<string, unknown>;

/** Parameters that only cap what a round may cost: a strategy may ask for less than the descriptor, never more. */
const CEILINGS: ReadonlySet<string> = new Set(['max_tokens', 'max_completion_tokens']);

const positive = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/**
 * The sampling parameters a strategy's model round goes out with. The strategy is handed the
 * descriptor's `model_parameters` and sends back whatever it likes in `completion_params`
 * (`max_tokens: 1000000`, `temperature: 2`); it runs in a plugin daemon, a third party's code.
 * So the descriptor's values are what the model gets: a parameter the descriptor names has its
 * value (a ceiling, such as `max_tokens`, the strategy's when lower: Dify strategies shrink it
 * to fit the context), and one the descriptor does not name is dropped, leaving the endpoint's
 * default.
 */
export function clampCompletionParams(asked: unknown, allowed: Readonly<Json>): Json {
  const given: Readonly<Json> = asked !== null && typeof asked === 'object' && !Array.isArray(asked) ? (asked as Json) : {};
  const out: Json = {};
  for (const [key, value] of Object.entries(allowed)) {
    const wanted = Object.hasOwn(given, key) ? given[key] : undefined;
    out[key] = CEILINGS.has(key) && positive(value) && positive(wanted) && wanted < value ? wanted : value;
  }
  return out;
}

/** A Dify LLM invocation with its parameters clamped; Dify names them `completion_params` or `model_parameters`. */
export function withClampedParams(invocation: LlmInvocation, allowed: Readonly<Json>): LlmInvocation {
  const { model_parameters: legacy, ...rest } = invocation;
  return { ...rest, completion_params: clampCompletionParams(invocation.completion_params ?? legacy, allowed) };
}
