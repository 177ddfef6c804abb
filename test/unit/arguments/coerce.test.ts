import { describe, expect, it } from 'vitest';
import { InvalidArgumentsError } from '../../../src/errors.js';
import { coerceParameter } from '../../../src/arguments/coerce.js';
import { param } from './helpers.js';

describe('coerceParameter', () => {
  describe.each(['string', 'secret-input', 'checkbox', 'dynamic-select'])('%s', (type) => {
    const p = param({ type });
    it('turns null into an empty string', () => {
      expect(coerceParameter(p, null)).toBe('');
    });
    it('keeps a string as it is', () => {
      expect(coerceParameter(p, 'a b')).toBe('a b');
    });
    it('gives a non-string its string form', () => {
      expect(coerceParameter(p, 42)).toBe('42');
      expect(coerceParameter(p, 1.5)).toBe('1.5');
      expect(coerceParameter(p, true)).toBe('true');
      expect(coerceParameter(p, { a: 1 })).toBe('{"a":1}');
      expect(coerceParameter(p, [1, 2])).toBe('[1,2]');
    });
  });

  describe('select', () => {
    const p = param({ type: 'select', options: [{ value: 'fast' }, { value: 'slow' }] });
    it('accepts one of the options', () => {
      expect(coerceParameter(p, 'slow')).toBe('slow');
    });
    it('refuses a value that is not an option', () => {
      expect(() => coerceParameter(p, 'medium')).toThrow(InvalidArgumentsError);
      expect(() => coerceParameter(p, 'medium')).toThrow(/must be one of fast, slow/);
    });
    it('compares numeric options by their string form', () => {
      const n = param({ type: 'select', options: [1, 2] });
      expect(coerceParameter(n, 2)).toBe('2');
    });
    it('turns null into an empty string when there are no options', () => {
      expect(coerceParameter(param({ type: 'select' }), null)).toBe('');
    });
  });

  describe('boolean', () => {
    const p = param({ type: 'boolean' });
    it('turns null into false', () => {
      expect(coerceParameter(p, null)).toBe(false);
    });
    it.each(['true', 'TRUE', 'Yes', 'y', '1', ' true '])('reads %j as true', (v) => {
      expect(coerceParameter(p, v)).toBe(true);
    });
    it.each(['false', 'False', 'NO', 'n', '0'])('reads %j as false', (v) => {
      expect(coerceParameter(p, v)).toBe(false);
    });
    it('keeps booleans', () => {
      expect(coerceParameter(p, true)).toBe(true);
      expect(coerceParameter(p, false)).toBe(false);
    });
    it('falls back to Python truthiness', () => {
      expect(coerceParameter(p, 'maybe')).toBe(true);
      expect(coerceParameter(p, '')).toBe(false);
      expect(coerceParameter(p, 0)).toBe(false);
      expect(coerceParameter(p, 2)).toBe(true);
      expect(coerceParameter(p, [])).toBe(false);
      expect(coerceParameter(p, {})).toBe(false);
      expect(coerceParameter(p, [0])).toBe(true);
      expect(coerceParameter(p, { a: 1 })).toBe(true);
    });
  });

  describe('number', () => {
    const p = param({ type: 'number' });
    it('passes numbers', () => {
      expect(coerceParameter(p, 3)).toBe(3);
      expect(coerceParameter(p, -2.5)).toBe(-2.5);
    });
    it('reads a numeric string without a dot as an integer', () => {
      expect(coerceParameter(p, '42')).toBe(42);
      expect(coerceParameter(p, ' -7 ')).toBe(-7);
    });
    it('reads a numeric string with a dot as a float', () => {
      expect(coerceParameter(p, '2.5')).toBe(2.5);
      expect(coerceParameter(p, '.5')).toBe(0.5);
      expect(coerceParameter(p, '1.5e3')).toBe(1500);
    });
    it.each(['abc', '', '0x10', '1e3', 'Infinity', 'NaN', '1.2.3', '12abc'])('refuses the string %j', (v) => {
      expect(() => coerceParameter(p, v)).toThrow(InvalidArgumentsError);
      expect(() => coerceParameter(p, v)).toThrow('tool parameter p must be a number');
    });
    it('refuses values that are neither numbers nor strings', () => {
      expect(() => coerceParameter(p, [1])).toThrow(InvalidArgumentsError);
      expect(() => coerceParameter(p, { n: 1 })).toThrow(InvalidArgumentsError);
    });
    it('enforces declared min and max', () => {
      const bounded = param({ type: 'number', min: 1, max: 10 });
      expect(coerceParameter(bounded, '10')).toBe(10);
      expect(() => coerceParameter(bounded, 0)).toThrow('must be at least 1');
      expect(() => coerceParameter(bounded, '11')).toThrow('must be at most 10');
    });
  });

  describe.each(['files', 'system-files'])('%s', (type) => {
    const p = param({ type });
    it('wraps a single value in a list', () => {
      expect(coerceParameter(p, 'https://x/a.png')).toEqual(['https://x/a.png']);
    });
    it('keeps a list', () => {
      expect(coerceParameter(p, ['a', 'b'])).toEqual(['a', 'b']);
    });
  });

  describe('file', () => {
    const p = param({ type: 'file' });
    it('unwraps a list of one', () => {
      expect(coerceParameter(p, [{ url: 'u' }])).toEqual({ url: 'u' });
    });
    it('keeps a single value', () => {
      expect(coerceParameter(p, 'u')).toBe('u');
    });
    it("refuses a list of several with Dify's text", () => {
      expect(() => coerceParameter(p, ['a', 'b'])).toThrow(
        new InvalidArgumentsError('This parameter only accepts one file but got multiple files while invoking.'),
      );
    });
    it('refuses an empty list with the same text', () => {
      expect(() => coerceParameter(p, [])).toThrow('This parameter only accepts one file but got multiple files while invoking.');
    });
  });

  describe.each(['model-selector', 'app-selector'])('%s', (type) => {
    const p = param({ type });
    it('keeps an object', () => {
      expect(coerceParameter(p, { provider: 'x' })).toEqual({ provider: 'x' });
    });
    it.each([
      ['a string', 'x'],
      ['a list', [1]],
      ['a number', 1],
    ])("refuses %s with Dify's text", (_what, v) => {
      expect(() => coerceParameter(p, v)).toThrow(new InvalidArgumentsError('The selector must be a dictionary.'));
    });
  });

  describe('any', () => {
    it('passes any JSON value unchanged', () => {
      const p = param({ type: 'any' });
      for (const v of ['s', 1, true, [1], { a: 1 }, null]) expect(coerceParameter(p, v)).toEqual(v);
    });
  });

  describe('array', () => {
    const p = param({ type: 'array' });
    it('passes a list', () => {
      expect(coerceParameter(p, [1, 'a'])).toEqual([1, 'a']);
    });
    it('parses a string holding a JSON list', () => {
      expect(coerceParameter(p, '[1, "a"]')).toEqual([1, 'a']);
    });
    it('wraps a string that is not a JSON list', () => {
      expect(coerceParameter(p, 'hello')).toEqual(['hello']);
      expect(coerceParameter(p, '{"a":1}')).toEqual(['{"a":1}']);
    });
    it('wraps anything else', () => {
      expect(coerceParameter(p, 5)).toEqual([5]);
      expect(coerceParameter(p, { a: 1 })).toEqual([{ a: 1 }]);
    });
  });

  describe('object', () => {
    const p = param({ type: 'object' });
    it('passes an object', () => {
      expect(coerceParameter(p, { a: 1 })).toEqual({ a: 1 });
    });
    it('parses a string holding a JSON object', () => {
      expect(coerceParameter(p, '{"a": [1]}')).toEqual({ a: [1] });
    });
    it('drops __proto__ keys from a string holding a JSON object, however they are spelled', () => {
      for (const text of ['{"__proto__": {"x": 1}, "a": 1}', '{"\\u005f_proto__": {"x": 1}, "a": 1}', '{"a": {"__proto__": {"x": 1}}}']) {
        const v = coerceParameter(p, text) as Record<string, unknown>;
        expect(Object.keys(v)).toEqual(['a']);
        expect(Object.getOwnPropertyNames(v['a'] ?? {})).not.toContain('__proto__');
      }
    });
    it('gives an empty object for a string that is not a JSON object', () => {
      expect(coerceParameter(p, 'nope')).toEqual({});
      expect(coerceParameter(p, '[1]')).toEqual({});
    });
    it('gives an empty object for anything else', () => {
      expect(coerceParameter(p, 3)).toEqual({});
      expect(coerceParameter(p, [1])).toEqual({});
    });
  });

  describe('date and date-range', () => {
    it('treats a date as a string', () => {
      expect(coerceParameter(param({ type: 'date' }), '2024-01-02')).toBe('2024-01-02');
    });
    it('accepts a date range as an object or its JSON text', () => {
      const p = param({ type: 'date-range' });
      expect(coerceParameter(p, { start: 'a', end: 'b' })).toEqual({ start: 'a', end: 'b' });
      expect(coerceParameter(p, '{"start":"a","end":"b"}')).toEqual({ start: 'a', end: 'b' });
    });
    it('refuses a date range without string start and end', () => {
      expect(() => coerceParameter(param({ type: 'date-range' }), { start: 'a' })).toThrow(InvalidArgumentsError);
    });
  });
});
