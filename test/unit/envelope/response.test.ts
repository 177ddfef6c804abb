import { describe, expect, it } from 'vitest';
import { decodeResponse, encodeChunk, encodeError, observationText, wireError } from '../../../src/envelope/response.js';
import { InvalidArgumentsError, ToolFailedError } from '../../../src/errors.js';

describe('response encoding', () => {
  it('writes error null on success, never an empty error object', () => {
    const wire = JSON.parse(encodeChunk('Here is a pun', true).toString()) as Record<string, unknown>;
    expect(wire).toEqual({ error: null, response: 'Here is a pun', end_of_stream: true });
  });

  it('escapes text so any string survives', () => {
    const text = 'line1\nline2 "quoted" \\ \u0000 😀';
    expect(decodeResponse(encodeChunk(text, false))).toEqual({ error: null, response: text, endOfStream: false });
  });

  it('writes an error with its type, an empty response and end_of_stream true', () => {
    const wire = JSON.parse(encodeError('tool-service-error', 'boom').toString()) as Record<string, unknown>;
    expect(wire).toEqual({ error: { type: 'tool-service-error', message: 'boom' }, response: '', end_of_stream: true });
  });

  it('never sends an empty error message', () => {
    const wire = JSON.parse(encodeError('timeout', '').toString()) as { error: { message: string } };
    expect(wire.error.message).toBe('timeout');
  });

  it('sends a non-string result as its JSON text', () => {
    expect(observationText({ a: 1 })).toBe('{"a":1}');
    expect(observationText(42)).toBe('42');
    expect(observationText('plain')).toBe('plain');
    expect(observationText(null)).toBe('');
    expect(observationText(undefined)).toBe('');
    expect(observationText(Buffer.from('héllo'))).toBe('héllo');
    expect(observationText([null])).toBe('[null]');
  });

  // Found by envelope.property.test.ts: JSON.stringify threw on a BigInt (the agent got
  // "internal error"), and gave undefined for a function (an unparseable frame).
  it('writes a BigInt as its digits, and a function as nothing', () => {
    expect(observationText(12345678901234567890n)).toBe('12345678901234567890');
    expect(observationText({ id: 2n ** 64n, n: 1 })).toBe('{"id":18446744073709551616,"n":1}');
    expect(observationText(() => 1)).toBe('');
    expect(
      JSON.parse(
        encodeChunk(
          observationText(() => 1),
          true,
        ).toString('utf8'),
      ),
    ).toMatchObject({ response: '' });
  });

  it('keeps internal error text off the wire but passes ToolwireError text', () => {
    expect(wireError(new Error('/etc/secret path leaked'))).toEqual({
      type: 'tool-service-error',
      message: 'internal error in the tool worker',
      severity: 'internal',
    });
    expect(wireError(new InvalidArgumentsError('bad topic'))).toEqual({ type: 'invalid-arguments', message: 'bad topic', severity: 'expected' });
  });

  it("reads a tool service's response of the right shape, a missing response as empty and a missing end_of_stream as final", () => {
    const wire = (body: unknown) => Buffer.from(JSON.stringify(body));
    expect(decodeResponse(wire({ error: { type: 'tool-service-error', message: 'boom' }, response: null, end_of_stream: true }))).toEqual({
      error: { type: 'tool-service-error', message: 'boom' },
      response: '',
      endOfStream: true,
    });
    // TrustGraph's client reads "error": {} as an error with an empty message; so does toolwire's.
    expect(decodeResponse(wire({ error: {}, response: 'x', extra: 1 }))).toEqual({ error: { type: '', message: '' }, response: 'x', endOfStream: true });
  });

  it('refuses a response of the wrong shape with an error naming the field', () => {
    const wrong = (body: unknown) => () => decodeResponse(Buffer.from(JSON.stringify(body)));
    expect(wrong({ error: null, response: 'x', end_of_stream: 'false' })).toThrow(ToolFailedError);
    expect(wrong({ error: null, response: 'x', end_of_stream: 'false' })).toThrow(/^the response is malformed at end_of_stream: /);
    expect(wrong({ error: null, response: { text: 'x' }, end_of_stream: true })).toThrow(/^the response is malformed at response: /);
    expect(wrong({ error: 'boom', response: '', end_of_stream: true })).toThrow(/^the response is malformed at error: /);
    expect(wrong({ error: { type: 5, message: 'm' }, response: '', end_of_stream: true })).toThrow(/^the response is malformed at error\.type: /);
    expect(wrong(['x'])).toThrow(/^the response is malformed at \(root\): /);
  });
});
