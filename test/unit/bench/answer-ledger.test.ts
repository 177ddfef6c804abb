import { afterEach, describe, expect, it } from 'vitest';
import { AnswerLedger } from '../../../bench/drills/answer-ledger.js';
import { encodeChunk, encodeError } from '../../../src/envelope/response.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';

const RES = 'persistent://tg/response/ledger-test';
let transport: MemoryTransport | undefined;
afterEach(async () => transport?.close());

describe('AnswerLedger', () => {
  it('counts answered, missing, duplicate, error and stray responses by id', async () => {
    transport = new MemoryTransport();
    const ledger = await AnswerLedger.open(transport, RES, 'agent');
    for (const id of ['a', 'b', 'c', 'd']) ledger.track(id);
    const p = await transport.producer(RES);
    await p.send({ data: encodeChunk('he', false), properties: { id: 'a' } });
    await p.send({ data: encodeChunk('llo', true), properties: { id: 'a' } });
    await p.send({ data: encodeChunk('again', true), properties: { id: 'a' } });
    await p.send({ data: encodeError('timeout', 'too slow'), properties: { id: 'b' } });
    await p.send({ data: encodeChunk('x', true), properties: { id: 'c' } });
    await p.send({ data: encodeChunk('?', true), properties: { id: 'nobody' } });
    await ledger.waitFor(() => ledger.counts().answered === 3 && ledger.counts().stray === 1, 2_000);
    expect(ledger.counts()).toEqual({ tracked: 4, answered: 3, missing: 1, duplicates: 1, errorAnswers: 1, stray: 1, redelivered: 0 });
    expect(ledger.answer('a')).toMatchObject({ text: 'hello', finals: 2 });
    expect(ledger.answer('b')?.final.error?.type).toBe('timeout');
    expect(ledger.missingIds()).toEqual(['d']);
    await ledger.close();
  });

  it('resolves whenAnswered on the first final answer', async () => {
    transport = new MemoryTransport();
    const ledger = await AnswerLedger.open(transport, RES, 'agent');
    ledger.track('x');
    const waiting = ledger.whenAnswered('x');
    await (await transport.producer(RES)).send({ data: encodeChunk('done', true), properties: { id: 'x' } });
    await waiting;
    expect(ledger.answer('x')?.text).toBe('done');
    await ledger.close();
  });

  it('times out waitFor when the condition never holds', async () => {
    transport = new MemoryTransport();
    const ledger = await AnswerLedger.open(transport, RES, 'agent');
    ledger.track('never');
    await expect(ledger.waitFor(() => ledger.counts().missing === 0, 50)).rejects.toThrow(/not met/);
    await ledger.close();
  });
});
