import { encodeRequest } from '../src/envelope/request.js';

/** What each benchmark request asks the echo tool for. */
export interface PayloadShape {
  /** Size of the `arguments` JSON text the agent sends. */
  readonly argumentBytes: number;
  /** 0: a single answer of `text`. C > 0: the tool yields C chunks (streamed or joined). */
  readonly chunks: number;
}

/**
 * The request body every target gets for a run: `{"config":"{}","arguments":"{...}"}` with
 * the arguments padded to `argumentBytes`. With chunks, the text is cut so the whole
 * observation (C chunks) is about the same size as a single answer: a stream run then
 * differs from a single run only in how the answer travels, not in how much of it.
 */
export function benchRequestBody(shape: PayloadShape): { body: Buffer; expectedResponse: string; text: string } {
  const chunks = Math.max(0, Math.trunc(shape.chunks));
  const target = Math.max(16, Math.trunc(shape.argumentBytes));
  if (chunks === 0) {
    const skeleton = JSON.stringify({ text: '' }).length;
    const text = filler(Math.max(1, target - skeleton));
    return { body: encodeRequest({ config: {}, arguments: { text } }), expectedResponse: text, text };
  }
  const text = filler(Math.max(1, Math.floor(target / chunks)));
  const skeleton = JSON.stringify({ text, chunks, pad: '' }).length;
  const pad = filler(Math.max(0, target - skeleton));
  return { body: encodeRequest({ config: {}, arguments: { text, chunks, pad } }), expectedResponse: text.repeat(chunks), text };
}

/** Printable ASCII that needs no JSON escaping, so byte counts are exact. */
function filler(n: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[i % alphabet.length];
  return s;
}
