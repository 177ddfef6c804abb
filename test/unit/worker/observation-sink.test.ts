import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeResponse } from '../../../src/envelope/response.js';
import { PayloadTooLargeError } from '../../../src/errors.js';
import type { OutgoingMessage, Producer } from '../../../src/transport/transport.js';
import { SEQ_PROPERTY } from '../../../src/envelope/properties.js';
import { createSink, JOIN_AFTER, wholeAnswer } from '../../../src/worker/observation-sink.js';
import { anyText, checkProperty } from '../../support/properties.js';

/** Lets the current turn of the event loop end (the stream sink sends at the end of a turn). */
const endOfTurn = () => new Promise((r) => setImmediate(r));

/** A producer whose sends stay unconfirmed until the test confirms them, in order. */
function heldProducer() {
  const sent: { text: string; end: boolean }[] = [];
  const properties: Readonly<Record<string, string>>[] = [];
  const unconfirmed: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const producer: Producer = {
    topic: 't',
    send(m: OutgoingMessage) {
      const r = decodeResponse(Buffer.isBuffer(m.data) ? m.data : Buffer.from(m.data));
      sent.push({ text: r.response, end: r.endOfStream });
      properties.push(m.properties ?? {});
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
  return { producer, sent, properties, confirmOne, unconfirmed: () => unconfirmed.length };
}

describe('stream sink', () => {
  it('sends a chunk at the end of its turn when nothing is unconfirmed, so a slow tool streams chunk by chunk', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    sink.write('a');
    expect(p.sent).toEqual([]);
    expect(sink.started).toBe(false);
    await endOfTurn();
    expect(p.sent.map((s) => s.text)).toEqual(['a']);
    expect(sink.started).toBe(true);
    await p.confirmOne();
    sink.write('b');
    await endOfTurn();
    expect(p.sent.map((s) => s.text)).toEqual(['a', 'b']);
  });

  it('keeps the boundaries of a few chunks written in one turn, and ends with an empty final message', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    for (const c of ['a', 'b', 'c']) sink.write(c);
    expect(p.sent).toEqual([]);
    const ending = sink.end();
    while (p.unconfirmed() > 0 || p.sent.length < 4) await p.confirmOne();
    await ending;
    expect(p.sent).toEqual([
      { text: 'a', end: false },
      { text: 'b', end: false },
      { text: 'c', end: false },
      { text: '', end: true },
    ]);
  });

  it('joins a burst written in one turn, in order, into one message at the end of the turn', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    const burst = Array.from({ length: JOIN_AFTER + 5 }, (_, i) => `${i},`);
    for (const c of burst) sink.write(c);
    await endOfTurn();
    expect(p.sent.map((s) => s.text)).toEqual([burst.join('')]);
  });

  it('joins a burst that waited for a confirmation into one message when the send before it is confirmed', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    sink.write('first,');
    await endOfTurn();
    const burst = Array.from({ length: JOIN_AFTER + 5 }, (_, i) => `${i},`);
    for (const c of burst) sink.write(c);
    await endOfTurn();
    expect(p.sent).toHaveLength(1);
    await p.confirmOne();
    expect(p.sent.map((s) => s.text)).toEqual(['first,', burst.join('')]);
  });

  it('sends a whole answer written in one turn as the final message alone: 100 chunks in 1 message', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    const chunks = Array.from({ length: 100 }, (_, i) => `${i},`);
    for (const c of chunks) sink.write(c);
    const ending = sink.end();
    await endOfTurn();
    await p.confirmOne();
    await ending;
    expect(p.sent).toEqual([{ text: chunks.join(''), end: true }]);
    expect(p.properties).toEqual([{ id: 'r', [SEQ_PROPERTY]: '0' }]);
  });

  it('sends a burst still waiting for a confirmation at the end with the final message', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    sink.write('first,');
    await endOfTurn();
    const chunks = Array.from({ length: 100 }, (_, i) => `${i},`);
    for (const c of chunks) sink.write(c);
    const ending = sink.end();
    // The final message waits until every chunk message is confirmed.
    await endOfTurn();
    expect(p.sent).toHaveLength(1);
    while (p.unconfirmed() > 0 || p.sent.length < 2) await p.confirmOne();
    await ending;
    expect(p.sent).toEqual([
      { text: 'first,', end: false },
      { text: chunks.join(''), end: true },
    ]);
  });

  it('numbers every message of a streamed answer from 0, the final one included', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    for (const c of ['a', 'b', 'c']) sink.write(c);
    const ending = sink.end();
    while (p.unconfirmed() > 0 || p.sent.length < 4) await p.confirmOne();
    await ending;
    expect(p.properties).toEqual(['0', '1', '2', '3'].map((n) => ({ id: 'r', [SEQ_PROPERTY]: n })));
  });

  it('leaves a single answer unnumbered: one message cannot have a gap', async () => {
    const p = heldProducer();
    const sink = createSink(false, p.producer, { id: 'r' }, 1 << 20);
    sink.write('a');
    const ending = sink.end();
    await p.confirmOne();
    await ending;
    expect(p.properties).toEqual([{ id: 'r' }]);
  });

  it('fails end() with the error of a chunk the broker refused, and sends no final message', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 1 << 20);
    sink.write('a');
    const ending = expect(sink.end()).rejects.toThrow('refused');
    await p.confirmOne(new Error('refused'));
    await ending;
    expect(p.sent.some((s) => s.end)).toBe(false);
  });

  it('refuses a chunk that takes the observation past its limit', async () => {
    const p = heldProducer();
    const sink = createSink(true, p.producer, { id: 'r' }, 5);
    sink.write('abc');
    expect(() => sink.write('def')).toThrow(PayloadTooLargeError);
  });

  it('counts the limit in UTF-8 bytes, in both modes', () => {
    for (const stream of [true, false]) {
      const sink = createSink(stream, heldProducer().producer, { id: 'r' }, 5);
      sink.write('éé'); // 2 units, 4 bytes
      expect(() => sink.write('é')).toThrow(PayloadTooLargeError); // 6 bytes in 3 units
      expect(() => createSink(stream, heldProducer().producer, { id: 'r' }, 5).write('ééé')).toThrow(PayloadTooLargeError);
      expect(() => createSink(stream, heldProducer().producer, { id: 'r' }, 5).write('x'.repeat(50 * 1024 * 1024))).toThrow(PayloadTooLargeError);
    }
  });
});

describe('whole answer', () => {
  it('refuses exactly the texts whose UTF-8 bytes pass the limit, whatever their units', () => {
    // Limits near 1-3 bytes a unit, where counting the units alone could decide either way.
    const textAndLimit = anyText(40).chain((text) => fc.tuple(fc.constant(text), fc.integer({ min: 0, max: text.length * 3 + 2 })));
    checkProperty(
      'wholeAnswer: the limit in UTF-8 bytes',
      fc.property(textAndLimit, ([text, max]) => {
        if (Buffer.byteLength(text, 'utf8') > max) expect(() => wholeAnswer(text, max)).toThrow(PayloadTooLargeError);
        else expect(decodeResponse(wholeAnswer(text, max))).toEqual({ error: null, response: text, endOfStream: true });
      }),
      2_000,
    );
  });
});
