import { describe, expect, it } from 'vitest';
import { decodeResponse } from '../../../src/envelope/response.js';
import { PayloadTooLargeError } from '../../../src/errors.js';
import type { OutgoingMessage, Producer } from '../../../src/transport/transport.js';
import { createSink, STREAM_WINDOW } from '../../../src/worker/observation-sink.js';

/** A producer whose sends stay unconfirmed until the test confirms them, in order. */
function heldProducer() {
  const sent: { text: string; end: boolean }[] = [];
  const unconfirmed: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const producer: Producer = {
    topic: 't',
    send(m: OutgoingMessage) {
      const r = decodeResponse(Buffer.isBuffer(m.data) ? m.data : Buffer.from(m.data));
      sent.push({ text: r.response, end: r.endOfStream });
      return new Promise<void>((resolve, reject) => unconfirmed.push({ resolve, reject }));
    },
  };
  const confirmOne = async (err?: Error) => {
    const u = unconfirmed.shift();
    if (!u) throw new Error('nothing to confirm');
    if (err) u.reject(err);
    else u.resolve();
    await new Promise((r) => setImmediate(r));
  };
  return { producer, sent, confirmOne, unconfirmed: () => unconfirmed.length };
}

describe('stream sink', () => {
  it('sends each chunk as its own message while the window has room', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    for (let i = 0; i < STREAM_WINDOW; i++) await sink.write(`c${i}`);
    expect(p.sent.map((s) => s.text)).toEqual(Array.from({ length: STREAM_WINDOW }, (_, i) => `c${i}`));
    expect(sink.started).toBe(true);
  });

  it('joins the chunks of a burst that arrive while the window is full, in order, then ends with an empty final message', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    for (let i = 0; i < 100; i++) await sink.write(`${i},`);
    expect(p.sent).toHaveLength(STREAM_WINDOW);
    await p.confirmOne();
    // One confirmation frees one slot: everything that waited leaves as one message.
    expect(p.sent).toHaveLength(STREAM_WINDOW + 1);
    const ending = sink.end();
    while (p.unconfirmed() > 0) await p.confirmOne();
    await ending;
    expect(p.sent.at(-1)).toEqual({ text: '', end: true });
    expect(p.sent.slice(0, -1).every((s) => !s.end)).toBe(true);
    expect(p.sent.map((s) => s.text).join('')).toBe(Array.from({ length: 100 }, (_, i) => `${i},`).join(''));
    expect(p.sent.length).toBeLessThanOrEqual(STREAM_WINDOW + 2);
  });

  it('fails end() with the error of a chunk the broker refused, and sends no final message', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    await sink.write('a');
    const ending = expect(sink.end()).rejects.toThrow('refused');
    await p.confirmOne(new Error('refused'));
    await ending;
    expect(p.sent.some((s) => s.end)).toBe(false);
  });

  it('refuses a chunk that takes the observation past its limit', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 5);
    await sink.write('abc');
    await expect(sink.write('def')).rejects.toBeInstanceOf(PayloadTooLargeError);
  });
});
