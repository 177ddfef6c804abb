import { describe, expect, it } from 'vitest';
import { InvalidArgumentsError } from '../../../src/errors.js';
import { missingRuntimeParameters, prepareArguments } from '../../../src/arguments/prepare-arguments.js';
import { param } from './helpers.js';

describe('prepareArguments', () => {
  const params = [
    param({ name: 'query', type: 'string', required: true }),
    param({ name: 'limit', type: 'number', default: 5 }),
    param({ name: 'region', type: 'select', form: 'form', options: ['eu', 'us'], required: true }),
    param({ name: 'safe', type: 'boolean', form: 'llm' }),
  ];

  it('starts from runtime values, lets the model fill llm parameters, and coerces', () => {
    const out = prepareArguments(params, { region: 'eu' }, { query: 'cats', limit: '10', safe: 'no' });
    expect(out).toEqual({ region: 'eu', query: 'cats', limit: 10, safe: false });
  });

  it('lets request arguments override a runtime value of an llm parameter', () => {
    const out = prepareArguments(params, { region: 'eu', query: 'from config' }, { query: 'from model' });
    expect(out['query']).toBe('from model');
  });

  it('keeps the runtime value of a non-llm parameter even when the request names it', () => {
    const out = prepareArguments(params, { region: 'eu' }, { query: 'q', region: 'us' });
    expect(out['region']).toBe('eu');
  });

  it('keeps a runtime value of an undeclared key even when the request names it', () => {
    const out = prepareArguments(params, { region: 'eu', api_base: 'https://internal.example' }, { query: 'q', api_base: 'https://attacker.example' });
    expect(out['api_base']).toBe('https://internal.example');
  });

  it('fills a missing parameter from its default, then coerces it', () => {
    const p = [param({ name: 'n', type: 'number', default: '3' })];
    expect(prepareArguments(p, {}, {})).toEqual({ n: 3 });
  });

  it('treats null as missing when a default exists', () => {
    expect(prepareArguments(params, { region: 'eu' }, { query: 'q', limit: null })['limit']).toBe(5);
  });

  it('names a required argument the call left out as missing from the call', () => {
    expect(() => prepareArguments(params, { region: 'eu' }, {})).toThrow(new InvalidArgumentsError('argument query is missing from the call'));
  });

  it('names every required argument the call left out, in one message', () => {
    const p = [param({ name: 'city', required: true }), param({ name: 'days', type: 'number', required: true }), param({ name: 'units', default: 'c' })];
    expect(() => prepareArguments(p, {}, { days: null })).toThrow(new InvalidArgumentsError('arguments city, days are missing from the call'));
  });

  it("names a hidden parameter without a value as missing from the tool's runtime-parameters, not from the call", () => {
    expect(() => prepareArguments(params, {}, {})).toThrow(
      new InvalidArgumentsError("argument query is missing from the call; argument region is missing from the tool's runtime-parameters"),
    );
  });

  it('leaves out an optional parameter that has no value and no default', () => {
    const out = prepareArguments(params, { region: 'eu' }, { query: 'q' });
    expect(Object.keys(out)).not.toContain('safe');
  });

  it('passes undeclared keys through unchanged', () => {
    const out = prepareArguments(params, { region: 'eu', extra: { a: 1 } }, { query: 'q', other: [1] });
    expect(out['extra']).toEqual({ a: 1 });
    expect(out['other']).toEqual([1]);
  });

  it('fails on a coercion error of any declared parameter', () => {
    expect(() => prepareArguments(params, { region: 'asia' }, { query: 'q' })).toThrow(/must be one of eu, us/);
  });

  it('returns the request as it is when nothing is declared', () => {
    const req = { a: '1' };
    expect(prepareArguments([], {}, req)).toBe(req);
  });

  // Found by coerce.property.test.ts: an unset parameter read the value its object inherits
  // ("function Object() { [native code] }"), and one named __proto__ replaced the prototype.
  it('gives a parameter named like an inherited property no value the model did not send', () => {
    const p = [param({ name: 'toString', type: 'string' }), param({ name: 'constructor', type: 'files' }), param({ name: '__proto__', type: 'array' })];
    const out = prepareArguments(p, {}, { q: 'x' });
    expect(out).toEqual({ q: 'x' });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    const given = prepareArguments(p, JSON.parse('{"__proto__":"[1]"}') as Record<string, unknown>, { toString: 'a' });
    expect(Object.getPrototypeOf(given)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(given, '__proto__')?.value).toEqual([1]);
    expect(Object.getOwnPropertyDescriptor(given, 'toString')?.value).toBe('a');
  });

  // Found by coerce.property.test.ts: a null from the model erased the runtime value, though null counts as "no value" for defaults.
  it('keeps the runtime value of an llm parameter when the model sends null', () => {
    const p = [param({ name: 'q', type: 'string' })];
    expect(prepareArguments(p, { q: 'from config' }, { q: null })).toEqual({ q: 'from config' });
  });
});

describe('missingRuntimeParameters', () => {
  it('lists required non-llm parameters with neither a value nor a default', () => {
    const params = [
      param({ name: 'key_region', form: 'form', required: true }),
      param({ name: 'mode', form: 'form', required: true, default: 'fast' }),
      param({ name: 'label', form: 'schema', required: true }),
      param({ name: 'optional', form: 'form' }),
      param({ name: 'query', form: 'llm', required: true }),
    ];
    expect(missingRuntimeParameters(params, { label: 'x' })).toEqual(['key_region']);
    expect(missingRuntimeParameters(params, { label: null })).toEqual(['key_region', 'label']);
    expect(missingRuntimeParameters(params, { key_region: 'eu', label: 'x' })).toEqual([]);
  });
});
