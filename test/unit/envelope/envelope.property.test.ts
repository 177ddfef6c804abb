/**
 * Properties of the wire envelope (fast-check). The seed is random and printed; replay a
 * failure with `TOOLWIRE_FC_SEED=<seed> npx vitest run --project unit test/unit/envelope/envelope.property.test.ts`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRequest, encodeRequest, type ToolRequest } from '../../../src/envelope/request.js';
import { boundedText, decodeResponse, encodeChunk, encodeError, MAX_ERROR_TEXT, observationText } from '../../../src/envelope/response.js';
import { ErrorCode, InvalidRequestError, PayloadTooLargeError } from '../../../src/errors.js';
import { anyText, checkProperty, PROPERTY_TIMEOUT_MS } from '../../support/properties.js';

/** decodeRequest's whole contract: a request, or one of its two typed errors. */
function decodeOrTypedError(data: Buffer, maxPayloadBytes?: number): ToolRequest | Error {
  try {
    return decodeRequest(data, maxPayloadBytes);
  } catch (err) {
    if (err instanceof InvalidRequestError || err instanceof PayloadTooLargeError) return err;
    throw new Error(`decodeRequest threw an untyped ${String(err)}`, { cause: err });
  }
}

/** What Python's json.dumps writes by default: `", "` and `": "`, non-ASCII as \u escapes. */
function pythonDumps(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pythonDumps).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pythonDumps(k)}: ${pythonDumps(x)}`)
    .join(', ')}}`;
}

/** A value as the decoder must give it back: `__proto__` keys dropped (agent-json.ts). */
function withoutProtoKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutProtoKeys);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (k !== '__proto__') out[k] = withoutProtoKeys(x);
  return out;
}

const jsonObject = fc.dictionary(anyText(8), fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }), { maxKeys: 5 });

/** A field's value in a near-valid envelope: right and wrong types, JSON text and not. */
const fieldValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(''),
  jsonObject.map((o) => JSON.stringify(o)),
  jsonObject,
  fc.jsonValue({ maxDepth: 2 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  anyText(30),
  fc.nat(2000).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.nat(2000).map((n) => `{"__proto__":{"polluted":1},"a":${'['.repeat(n)}${']'.repeat(n)}}`),
);

const nearValidEnvelope = fc.record(
  { config: fieldValue, arguments: fieldValue, user: fc.oneof(fc.constant(undefined), anyText(10), fc.jsonValue({ maxDepth: 1 })) },
  { requiredKeys: [] },
);

describe('decodeRequest (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('answers arbitrary bytes with a request or a typed error, never anything else', () => {
    checkProperty(
      'decodeRequest: arbitrary bytes',
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.option(fc.nat(400)), (bytes, max) => {
        decodeOrTypedError(Buffer.from(bytes), max ?? undefined);
      }),
      2_000,
    );
  });

  it('answers arbitrary JSON text, with lone surrogates and odd units, with a request or a typed error', () => {
    checkProperty(
      'decodeRequest: arbitrary JSON',
      fc.property(
        fc.oneof(
          fc.json({ maxDepth: 4 }),
          anyText(60),
          fc.jsonValue({ maxDepth: 3, stringUnit: 'binary' }).map((v) => JSON.stringify(v) ?? ''),
        ),
        (text) => {
          decodeOrTypedError(Buffer.from(text, 'utf8'));
        },
      ),
      2_000,
    );
  });

  it('refuses payloads that are not UTF-8 with InvalidRequestError, and those over the limit with PayloadTooLargeError', () => {
    checkProperty(
      'decodeRequest: invalid UTF-8 and oversize',
      fc.property(
        nearValidEnvelope,
        fc.nat(300),
        fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xe2, 0x82])),
        (env, max, bad) => {
          const good = Buffer.from(JSON.stringify(env), 'utf8');
          const broken = Buffer.concat([good.subarray(0, good.length - 1), bad, good.subarray(good.length - 1)]);
          expect(() => decodeRequest(broken)).toThrow(InvalidRequestError);
          const r = decodeOrTypedError(good, max);
          if (good.length > max) expect(r).toBeInstanceOf(PayloadTooLargeError);
          else expect(r).not.toBeInstanceOf(PayloadTooLargeError);
        },
      ),
      1_000,
    );
  });

  it('decodes near-valid envelopes (wrong types, missing fields, deep nesting, hostile keys) to a request or an InvalidRequestError', () => {
    checkProperty(
      'decodeRequest: near-valid envelopes',
      fc.property(nearValidEnvelope, (env) => {
        const r = decodeOrTypedError(Buffer.from(JSON.stringify(env), 'utf8'));
        if (r instanceof Error) {
          expect(r).toBeInstanceOf(InvalidRequestError);
          return;
        }
        expect(Object.getPrototypeOf(r.config)).toBe(Object.prototype);
        expect(Object.getPrototypeOf(r.arguments)).toBe(Object.prototype);
        expect(Object.hasOwn(r.arguments, '__proto__')).toBe(false);
      }),
      1_000,
    );
  });

  it('drops a `__proto__` key of a field sent as JSON text, whichever of its characters are escaped, at either level', () => {
    // Each character literal, escaped in the field's text (`\\u005f` in the envelope), or escaped in the
    // envelope's text so that only the outer parse turns it into the character.
    const spelling = fc.array(fc.constantFrom('literal', 'inner', 'outer'), { minLength: 9, maxLength: 9 });
    const hex = (c: string): string => c.charCodeAt(0).toString(16).padStart(4, '0');
    checkProperty(
      'decodeRequest: __proto__ spelled in a field',
      fc.property(spelling, fc.constantFrom('config', 'arguments'), (how, field) => {
        const key = [...'__proto__'].map((c, i) => (how[i] === 'inner' ? `\\\\u${hex(c)}` : how[i] === 'outer' ? `\\u${hex(c)}` : c)).join('');
        const envelope = `{"${field}":"{\\"${key}\\":{\\"polluted\\":1},\\"q\\":\\"x\\"}"}`;
        const value = decodeRequest(Buffer.from(envelope, 'utf8'))[field];
        expect(value).toEqual({ q: 'x' });
        expect(Object.hasOwn(value, '__proto__')).toBe(false);
        expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      }),
      500,
    );
  });

  it('refuses JSON nested deeper than it reads with an InvalidRequestError that says so, whatever the escapes', () => {
    checkProperty(
      'decodeRequest: deep nesting',
      fc.property(
        fc.integer({ min: 1_000, max: 250_000 }),
        fc.constantFrom('', '"\\u0041"', '"__proto__"'),
        fc.constantFrom('config', 'arguments', 'x'),
        (depth, extra, field) => {
          const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
          const r = decodeOrTypedError(Buffer.from(`{${extra ? `"e":${extra},` : ''}"${field}":{"d":${nested}}}`, 'utf8'));
          if (r instanceof Error) expect(r.message).toMatch(/nested too deeply/);
        },
      ),
      20,
    );
  });

  it('round-trips what an agent sends: our encoding and Python json.dumps (spaces, \\u escapes)', () => {
    checkProperty(
      'decodeRequest: round trip',
      fc.property(jsonObject, jsonObject, fc.option(anyText(12).filter((u) => u !== '')), fc.boolean(), (config, args, user, python) => {
        const request: ToolRequest = user === null ? { config, arguments: args } : { config, arguments: args, user };
        const env: Record<string, string> = {
          config: python ? pythonDumps(config) : JSON.stringify(config),
          arguments: python ? pythonDumps(args) : JSON.stringify(args),
        };
        if (user !== null) env['user'] = user;
        const wire = python ? Buffer.from(pythonDumps(env), 'utf8') : encodeRequest(request);
        const decoded = decodeRequest(wire);
        // Compared as JSON text: -0 and 0 are one number on the wire.
        expect(JSON.stringify(decoded.config)).toBe(JSON.stringify(withoutProtoKeys(config)));
        expect(JSON.stringify(decoded.arguments)).toBe(JSON.stringify(withoutProtoKeys(args)));
        expect(decoded.user).toBe(user ?? undefined);
      }),
      1_000,
    );
  });
});

describe('response encoding (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('encodes any text as valid UTF-8 JSON that decodes to the same text', () => {
    checkProperty(
      'encodeChunk: round trip',
      fc.property(fc.oneof(anyText(200), fc.string({ unit: 'binary', maxLength: 200 })), fc.boolean(), (text, eos) => {
        const wire = encodeChunk(text, eos);
        expect(Buffer.from(wire.toString('utf8'), 'utf8').equals(wire)).toBe(true);
        expect(decodeResponse(wire)).toEqual({ error: null, response: text, endOfStream: eos });
      }),
      2_000,
    );
  });

  it('encodes any error as a final frame with a non-empty message, bounded and never split inside a surrogate pair', () => {
    checkProperty(
      'encodeError: shape and bound',
      fc.property(
        fc.constantFrom(...Object.values(ErrorCode)),
        fc.oneof(anyText(50), fc.string({ unit: 'binary', minLength: MAX_ERROR_TEXT - 5, maxLength: MAX_ERROR_TEXT + 50 })),
        (type, message) => {
          const decoded = decodeResponse(encodeError(type, message));
          expect(decoded.endOfStream).toBe(true);
          expect(decoded.response).toBe('');
          expect(decoded.error!.type).toBe(type);
          expect(decoded.error!.message).toBe(message === '' ? type : boundedText(message));
          const kept = boundedText(message);
          expect(kept.length).toBeLessThanOrEqual(MAX_ERROR_TEXT + 40);
          if (kept !== message) {
            const head = kept.slice(0, kept.lastIndexOf('... ('));
            expect(message.startsWith(head)).toBe(true);
            const last = head.charCodeAt(head.length - 1);
            // A high surrogate may end the cut text only if it had no pair in the message.
            if (last >= 0xd800 && last <= 0xdbff) expect(message.charCodeAt(head.length) >= 0xdc00 && message.charCodeAt(head.length) <= 0xdfff).toBe(false);
          }
        },
      ),
      1_000,
    );
  });

  it('writes any JSON value a tool returns as its JSON text, big integers as their digits', () => {
    checkProperty(
      'observationText: JSON values',
      fc.property(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          fc.bigInt(),
          fc.dictionary(fc.string({ maxLength: 5 }), fc.bigInt(), { maxKeys: 3 }),
          fc.constantFrom(() => 1, Symbol('s')),
        ),
        (value) => {
          const text = observationText(value);
          if (typeof value === 'string') expect(text).toBe(value);
          else if (value === null || typeof value === 'function' || typeof value === 'symbol') expect(text).toBe('');
          else
            expect(text).toBe(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `\u0000big:${v}` : v)).replace(/"\\u0000big:(-?\d+)"/g, '$1'));
          // Whatever it is, it reaches the agent whole.
          expect(decodeResponse(encodeChunk(text, true)).response).toBe(text);
        },
      ),
      1_000,
    );
  });
});
