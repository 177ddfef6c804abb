import { describe, expect, it } from 'vitest';
import { decodeRequest, encodeRequest } from '../../../src/envelope/request.js';
import { InvalidRequestError, PayloadTooLargeError } from '../../../src/errors.js';

const b = (s: string) => Buffer.from(s, 'utf8');

describe('decodeRequest', () => {
  it('decodes double-encoded config and arguments', () => {
    const r = decodeRequest(b('{"config": "{\\"style\\": \\"pun\\"}", "arguments": "{\\"topic\\": \\"cats\\"}"}'));
    expect(r).toEqual({ config: { style: 'pun' }, arguments: { topic: 'cats' } });
  });

  it('passes on the user field of older agents and ignores unknown keys', () => {
    const r = decodeRequest(b('{"config":"{}","arguments":"{}","user":"alice","extra":[1,2]}'));
    expect(r.user).toBe('alice');
    expect(r).not.toHaveProperty('extra');
  });

  it('treats missing or empty config and arguments as empty objects', () => {
    expect(decodeRequest(b('{}'))).toEqual({ config: {}, arguments: {} });
    expect(decodeRequest(b('{"config":"","arguments":""}'))).toEqual({ config: {}, arguments: {} });
  });

  it('accepts config and arguments given as objects', () => {
    expect(decodeRequest(b('{"config":{"a":1},"arguments":{"b":2}}'))).toEqual({ config: { a: 1 }, arguments: { b: 2 } });
  });

  it.each([
    ['not JSON', 'not json at all', /not JSON/],
    ['a JSON array', '[1,2]', /must be a JSON object, got an array/],
    ['a JSON string', '"hello"', /must be a JSON object, got a string/],
    ['null', 'null', /got null/],
    ['arguments that are not JSON', '{"arguments":"{oops"}', /field "arguments" is not valid JSON/],
    ['config that encodes a list', '{"config":"[1]"}', /field "config" must encode a JSON object, got an array/],
    ['arguments of a wrong type', '{"arguments":42}', /field "arguments" must encode a JSON object, got a number/],
    ['a user that is not a string', '{"user":7}', /field "user" must be a string/],
  ])('refuses %s with a clear InvalidRequestError', (_name, payload, message) => {
    expect(() => decodeRequest(b(payload))).toThrow(InvalidRequestError);
    expect(() => decodeRequest(b(payload))).toThrow(message);
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(() => decodeRequest(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]))).toThrow(/not valid UTF-8/);
    // Beside a real U+FFFD, which the decoded text alone cannot tell from a bad byte.
    const mixed = Buffer.concat([b('{"arguments":{"t":"\uFFFD'), Buffer.from([0xff]), b('"}}')]);
    expect(() => decodeRequest(mixed)).toThrow(/not valid UTF-8/);
  });

  it('takes U+FFFD written as valid UTF-8 as the character it is', () => {
    expect(decodeRequest(b('{"arguments":{"t":"\uFFFD"}}')).arguments).toEqual({ t: '\uFFFD' });
  });

  it('refuses a payload over the limit before parsing it', () => {
    const big = b(`{"arguments":${JSON.stringify(JSON.stringify({ t: 'x'.repeat(2000) }))}}`);
    expect(() => decodeRequest(big, 1000)).toThrow(PayloadTooLargeError);
    expect(() => decodeRequest(big, 1000)).toThrow(/limit is 1000/);
  });

  it('round-trips what encodeRequest writes', () => {
    const req = { config: { style: 'pun' }, arguments: { topic: 'ü "quoted"' }, user: 'bob' };
    const wire = JSON.parse(encodeRequest(req).toString()) as Record<string, unknown>;
    expect(typeof wire['config']).toBe('string');
    expect(typeof wire['arguments']).toBe('string');
    expect(decodeRequest(encodeRequest(req))).toEqual(req);
  });
});

describe('decodeRequest and hostile keys', () => {
  it('drops __proto__ keys so they cannot reach a prototype', () => {
    const r = decodeRequest(
      b(
        JSON.stringify({
          arguments: JSON.stringify({ q: 'x', __proto__: { base_url: 'https://evil.example' } }).replace(
            '"q"',
            '"__proto__":{"base_url":"https://evil.example"},"q"',
          ),
        }),
      ),
    );
    expect(Object.keys(r.arguments)).toEqual(['q']);
    const merged: Record<string, unknown> = Object.assign({}, r.arguments);
    expect(merged['base_url']).toBeUndefined();
    const outer = decodeRequest(b('{"config":{"__proto__":{"polluted":1},"style":"pun"}}'));
    expect(outer.config).toEqual({ style: 'pun' });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('drops __proto__ keys spelled with JSON escapes too', () => {
    // The inner text holds `\u005f_proto__` literally; JSON.parse turns it into "__proto__".
    const inner = '{"\\u005f_proto__":{"base_url":"https://evil.example"},"q":"x"}';
    const r = decodeRequest(b(`{"arguments":"${inner.replace(/"/g, '\\"')}"}`));
    expect(Object.keys(r.arguments)).toEqual(['q']);
    expect(Object.assign({}, r.arguments)['base_url']).toBeUndefined();
    const outer = decodeRequest(b('{"config":{"\\u005f\\u005fproto__":{"polluted":1},"style":"pun"}}'));
    expect(outer.config).toEqual({ style: 'pun' });
  });
});

// Found by envelope.property.test.ts: the reviver that drops `__proto__` recursed past the stack.
describe('decodeRequest and deep nesting', () => {
  it('refuses a deeply nested payload holding a \\u escape as nested too deeply, not with a stack overflow text', () => {
    const depth = 200_000;
    const payload = b(`{"user":"\\u0041","arguments":{"d":${'['.repeat(depth)}${']'.repeat(depth)}}}`);
    expect(() => decodeRequest(payload)).toThrow(InvalidRequestError);
    expect(() => decodeRequest(payload)).toThrow(/nested too deeply/);
  });
});
