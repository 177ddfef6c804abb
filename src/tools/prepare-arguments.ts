import { InvalidArgumentsError } from '../errors.js';
import { coerceParameter } from './coerce.js';
import type { Parameter } from './parameter.js';

/**
 * The arguments a plugin sees, in Dify's order of precedence:
 * runtime (hidden) values, then the model's arguments, then defaults; then the required
 * check and coercion of every declared parameter. Undeclared keys pass through unchanged.
 *
 * One deliberate difference from Dify: a request cannot override a parameter whose form is
 * not `llm`. Those are the operator's settings; the model does not get to change them.
 */
export function prepareArguments(
  parameters: readonly Parameter[],
  runtime: Readonly<Record<string, unknown>>,
  requested: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  if (parameters.length === 0 && Object.keys(runtime).length === 0) return requested as Record<string, unknown>;
  const out: Record<string, unknown> = { ...runtime };
  const hidden = new Set<string>();
  for (const p of parameters) if (p.form !== 'llm') hidden.add(p.name);
  for (const key of Object.keys(requested)) {
    if (!hidden.has(key)) out[key] = requested[key];
  }
  for (const p of parameters) {
    let v = out[p.name];
    if (v === undefined || v === null) {
      if (p.default !== undefined && p.default !== null) v = p.default;
      else if (p.required) throw new InvalidArgumentsError(`tool parameter ${p.name} not found in tool config`);
      else {
        delete out[p.name];
        continue;
      }
    }
    out[p.name] = coerceParameter(p, v);
  }
  return out;
}

/** Required non-llm parameters with neither a runtime value nor a default (Dify's load-time check). */
export function missingRuntimeParameters(parameters: readonly Parameter[], runtime: Readonly<Record<string, unknown>>): string[] {
  return parameters
    .filter((p) => p.form !== 'llm' && p.required && (p.default === undefined || p.default === null))
    .filter((p) => runtime[p.name] === undefined || runtime[p.name] === null)
    .map((p) => p.name);
}
