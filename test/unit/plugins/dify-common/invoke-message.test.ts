import { describe, expect, it } from 'vitest';
import { parseInvokeMessage } from '../../../../src/plugins/dify-common/invoke-message.js';

describe('reading one invoke message', () => {
  it('reads a known type of the right shape, its meta null when absent', () => {
    expect(parseInvokeMessage({ type: 'text', message: { text: 'hi' } })).toEqual({ ok: true, message: { type: 'text', message: { text: 'hi' }, meta: null } });
  });

  it('names the field of a known type of the wrong shape', () => {
    expect(parseInvokeMessage({ type: 'blob_chunk', message: { id: 'b', sequence: -1, blob: '', end: false }, meta: null })).toEqual({
      ok: false,
      problem: expect.stringMatching(/^a blob_chunk message is malformed at message\.sequence: /),
    });
  });

  it('passes a type it does not know on, its meta kept only when it is an object', () => {
    expect(parseInvokeMessage({ type: 'hologram', message: { x: 1 }, meta: { a: 1 } })).toEqual({
      ok: true,
      message: { type: 'hologram', message: { x: 1 }, meta: { a: 1 } },
    });
    expect(parseInvokeMessage({ type: 'hologram', meta: ['not', 'an', 'object'] })).toEqual({ ok: true, message: { type: 'hologram', meta: null } });
  });

  it('names what is wrong with a value that is no message at all', () => {
    expect(parseInvokeMessage('text')).toEqual({ ok: false, problem: expect.stringMatching(/^an invoke message is malformed at \(root\): /) });
    expect(parseInvokeMessage({ message: { text: 'hi' } })).toEqual({ ok: false, problem: expect.stringMatching(/^an invoke message is malformed at type: /) });
  });
});
