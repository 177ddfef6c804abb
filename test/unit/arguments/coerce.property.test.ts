/**
 * Properties of argument coercion (fast-check). The seed is random and printed; replay a
 * failure with `TOOLWIRE_FC_SEED=<seed> npx vitest run --project unit test/unit/arguments/coerce.property.test.ts`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentsError } from '../../../src/errors.js';
import { isPlainObject } from '../../../src/plain-object.js';
import { coerceParameter } from '../../../src/arguments/coerce.js';
import { ParameterType, parameterSchema, type Parameter } from '../../../src/arguments/parameter.js';
import { prepareArguments } from '../../../src/arguments/prepare-arguments.js';
import { anyText, checkProperty, PROPERTY_TIMEOUT_MS } from '../../support/properties.js';

/** Names a model or a descriptor might use, with the ones an object inherits. */
const paramName = fc.oneof(
  { arbitrary: fc.constantFrom('q', 'limit', 'mode', 'when', 'file'), weight: 4 },
  { arbitrary: fc.constantFrom('toString', 'constructor', 'valueOf', 'hasOwnProperty', '__proto__'), weight: 1 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 6 }), weight: 2 },
);

/** What a model may send for an argument: any JSON value, or text that looks like one. */
const argumentValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('true', 'no', ' 42 ', '-1.5e3', '0x10', 'Infinity', '1e400', '.5', '5.', '[1,2]', '{"start":"a","end":"b"}', '{"__proto__":{"x":1}}', ''),
  anyText(12),
  fc.double(),
);

/** A declaration as a descriptor may write it, parsed as the catalog parses it. */
const declaration: fc.Arbitrary<Parameter> = fc
  .record(
    {
      name: paramName,
      type: fc.constantFrom(...Object.values(ParameterType)),
      form: fc.constantFrom('llm', 'form', 'schema'),
      required: fc.boolean(),
      default: fc.oneof(fc.constant(undefined), fc.constant(null), argumentValue),
      options: fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -5, max: 5 })), { maxLength: 4 }),
      min: fc.option(fc.integer({ min: -100, max: 100 }), { nil: undefined }),
      max: fc.option(fc.integer({ min: -100, max: 100 }), { nil: undefined }),
    },
    { requiredKeys: ['name', 'type'] },
  )
  .map((raw) => parameterSchema.parse(raw));

/** coerceParameter's whole contract: a value, or an InvalidArgumentsError. */
function coerceOrTypedError(p: Parameter, v: unknown): { value: unknown } | { error: InvalidArgumentsError } {
  try {
    return { value: coerceParameter(p, v) };
  } catch (err) {
    if (err instanceof InvalidArgumentsError) return { error: err };
    throw new Error(`coerceParameter threw an untyped ${String(err)}`, { cause: err });
  }
}

/** The shape each declared type promises a plugin. */
function hasDeclaredShape(p: Parameter, v: unknown): boolean {
  switch (p.type) {
    case 'string':
    case 'secret-input':
    case 'checkbox':
    case 'dynamic-select':
    case 'date':
      return typeof v === 'string';
    case 'select':
      return typeof v === 'string' && (!p.options || p.options.includes(v));
    case 'boolean':
      return typeof v === 'boolean';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) && (p.min === undefined || v >= p.min) && (p.max === undefined || v <= p.max);
    case 'files':
    case 'system-files':
    case 'array':
      return Array.isArray(v);
    case 'object':
    case 'model-selector':
    case 'app-selector':
      return isPlainObject(v);
    case 'date-range':
      return isPlainObject(v) && typeof v['start'] === 'string' && typeof v['end'] === 'string';
    case 'file':
    case 'any':
      return true;
  }
}

describe('coerceParameter (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('is total: any declaration and any value give a value of the declared shape or an InvalidArgumentsError', () => {
    checkProperty(
      'coerceParameter: total and typed',
      fc.property(declaration, argumentValue, (p, v) => {
        const r = coerceOrTypedError(p, v);
        if ('value' in r) expect(hasDeclaredShape(p, r.value)).toBe(true);
      }),
      3_000,
    );
  });

  it('is idempotent: coercing a coerced value again changes nothing', () => {
    checkProperty(
      'coerceParameter: idempotent',
      // A single file unwraps a one-item list each time: that is its rule, not a repeatable coercion.
      fc.property(
        declaration.filter((p) => p.type !== 'file'),
        argumentValue,
        (p, v) => {
          const r = coerceOrTypedError(p, v);
          if (!('value' in r)) return;
          expect(coerceParameter(p, r.value)).toEqual(r.value);
        },
      ),
      3_000,
    );
  });
});

describe('prepareArguments (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  // As JSON.parse makes them: plain objects; a request's `__proto__` keys were dropped by the decoder.
  const requestArguments = fc.dictionary(
    paramName.filter((k) => k !== '__proto__'),
    argumentValue,
    { maxKeys: 5, noNullPrototype: true },
  );
  const runtimeValues = fc.dictionary(paramName, argumentValue, { maxKeys: 3, noNullPrototype: true });
  const declarations = fc.uniqueArray(declaration, { selector: (p) => p.name, maxLength: 5 });

  it('gives every declared parameter its coerced value or leaves it out, keeps operator values, and refuses only with InvalidArgumentsError', () => {
    checkProperty(
      'prepareArguments: declared, hidden, required',
      fc.property(declarations, runtimeValues, requestArguments, (params, runtime, requested) => {
        let out: Record<string, unknown>;
        try {
          out = prepareArguments(params, runtime, requested);
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidArgumentsError);
          return;
        }
        for (const p of params) {
          const fromModel = p.form === 'llm' && Object.hasOwn(requested, p.name) ? requested[p.name] : undefined;
          const given = fromModel !== undefined && fromModel !== null ? fromModel : Object.hasOwn(runtime, p.name) ? runtime[p.name] : undefined;
          const source = given !== undefined && given !== null ? given : p.default !== undefined && p.default !== null ? p.default : undefined;
          if (source === undefined) {
            expect(Object.hasOwn(out, p.name)).toBe(false);
            expect(p.required).toBe(false);
          } else {
            expect(Object.hasOwn(out, p.name)).toBe(true);
            expect(out[p.name]).toEqual(coerceParameter(p, source));
          }
        }
        // A runtime value the tool does not declare as `llm` is the operator's; the model cannot replace it.
        for (const [k, v] of Object.entries(runtime)) {
          if (!params.some((p) => p.name === k)) expect(out[k]).toEqual(v);
        }
        expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
      }),
      2_000,
    );
  });

  it('is idempotent: preparing prepared arguments again changes nothing', () => {
    checkProperty(
      'prepareArguments: idempotent',
      fc.property(
        declarations.map((ps) => ps.filter((p) => p.type !== 'file')),
        runtimeValues,
        requestArguments,
        (params, runtime, requested) => {
          let out: Record<string, unknown>;
          try {
            out = prepareArguments(params, runtime, requested);
          } catch {
            return;
          }
          expect(prepareArguments(params, runtime, out)).toEqual(out);
        },
      ),
      2_000,
    );
  });
});
