import { LosslessNumber } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { jsonText } from '../../src/plain-object.js';

describe('jsonText', () => {
  it('writes a string, number or boolean field as String() does', () => {
    expect([jsonText('pun'), jsonText(42), jsonText(false), jsonText(10n)]).toEqual(['pun', '42', 'false', '10']);
  });

  it('writes a JSON object or array as its JSON, never "[object Object]"', () => {
    expect(jsonText({ code: 7 })).toBe('{"code":7}');
    expect(jsonText([1, { a: 'b' }])).toBe('[1,{"a":"b"}]');
  });

  it('writes a number too long for a double as the plugin did', () => {
    expect(jsonText(new LosslessNumber('12345678901234567890'))).toBe('12345678901234567890');
  });

  it('gives the fallback for null, undefined and what JSON cannot hold', () => {
    expect([jsonText(null), jsonText(undefined, 'plugin error'), jsonText(Symbol('s'), '-')]).toEqual(['', 'plugin error', '-']);
  });
});
