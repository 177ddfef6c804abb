import { InvalidArgumentsError } from '../errors.js';
import { coerceParameter } from './coerce.js';
import type { Parameter } from './parameter.js';

/**
 * The arguments a plugin sees, in Dify's order of precedence:
 * runtime (hidden) values, then the model's arguments, then defaults; then the required
 * check (every missing one named in one error) and coercion of every declared parameter.
 * Undeclared keys pass through unchanged. A declaration that carries its own JSON Schema
 * (`input_schema`: a typed tool's, an MCP server's) leaves the judging of values to that
 * schema's owner (see coerceParameter).
 *
 * One deliberate difference from Dify: a request cannot override a parameter whose form is
 * not `llm`, nor a runtime value of a key the tool does not declare. Those are the
 * operator's settings; the model does not get to change them. (A runtime value of a declared
 * `llm` parameter is a default the model may replace, as in Dify.)
 */
export function prepareArguments(
  parameters: readonly Parameter[],
  runtime: Readonly<Record<string, unknown>>,
  requested: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  if (parameters.length === 0 && Object.keys(runtime).length === 0) return requested;
  const out: Record<string, unknown> = { ...runtime };
  const hidden = hiddenKeys(parameters, runtime);
  // Every required argument left out, named in one answer: the model fixes them all at once.
  let missing: Parameter[] | undefined;
  for (const key of Object.keys(requested)) {
    const v = requested[key];
    // null is no value, here as for defaults below: it does not erase a runtime value.
    if (hidden.has(key) || ((v === undefined || v === null) && Object.hasOwn(out, key))) continue;
    setOwn(out, key, v);
  }
  for (const p of parameters) {
    // Own values only: a parameter named `toString` or `constructor` has no value the object inherits.
    const own = Object.hasOwn(out, p.name);
    let v = own ? out[p.name] : undefined;
    if (v === undefined || v === null) {
      if (p.default !== undefined && p.default !== null) v = p.default;
      else if (p.required) {
        (missing ??= []).push(p);
        continue;
      } else {
        // Only a key that is there: a delete is a call into the runtime even when it finds
        // nothing, and an optional parameter the model left out is the common case.
        if (own) delete out[p.name];
        continue;
      }
    }
    setOwn(out, p.name, coerceParameter(p, v));
  }
  if (missing) throw new InvalidArgumentsError(missingText(missing));
  return out;
}

/**
 * What is missing, and from where: an `llm` argument from the call (the model's to send), a
 * hidden one from the tool's `runtime-parameters` (the operator's; the load-time check finds
 * that first, short of a live change that raced it).
 */
function missingText(missing: readonly Parameter[]): string {
  const fromCall = missing.filter((p) => p.form === 'llm').map((p) => p.name);
  const fromConfig = missing.filter((p) => p.form !== 'llm').map((p) => p.name);
  return [said(fromCall, 'the call'), said(fromConfig, "the tool's runtime-parameters")].filter((text) => text !== '').join('; ');
}

function said(names: readonly string[], where: string): string {
  if (names.length === 0) return '';
  return names.length === 1 ? `argument ${names[0]} is missing from ${where}` : `arguments ${names.join(', ')} are missing from ${where}`;
}

/** `o[key] = value`, except that a `__proto__` key is a value too, never the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** Per tool (its declarations and runtime values are the same objects on every request): the keys a request may not set. */
const hiddenCache = new WeakMap<readonly Parameter[], { runtime: Readonly<Record<string, unknown>>; hidden: ReadonlySet<string> }>();

function hiddenKeys(parameters: readonly Parameter[], runtime: Readonly<Record<string, unknown>>): ReadonlySet<string> {
  const cached = hiddenCache.get(parameters);
  if (cached?.runtime === runtime) return cached.hidden;
  const hidden = new Set<string>(Object.keys(runtime));
  for (const p of parameters) if (p.form === 'llm') hidden.delete(p.name);
  for (const p of parameters) if (p.form !== 'llm') hidden.add(p.name);
  hiddenCache.set(parameters, { runtime, hidden });
  return hidden;
}

/** Required non-llm parameters with neither a runtime value nor a default (Dify's load-time check). */
export function missingRuntimeParameters(parameters: readonly Parameter[], runtime: Readonly<Record<string, unknown>>): string[] {
  return parameters
    .filter((parameter) => parameter.form !== 'llm' && parameter.required && (parameter.default === undefined || parameter.default === null))
    .filter((parameter) => runtime[parameter.name] === undefined || runtime[parameter.name] === null)
    .map((parameter) => parameter.name);
}
