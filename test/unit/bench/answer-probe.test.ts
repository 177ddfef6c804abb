import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AnswerProbe } from '../../../bench/answer-probe.js';
import { startFloorResponder, type FloorResponder } from '../../../bench/floor-responder.js';
import { encodeChunk } from '../../../src/envelope/response.js';
import { TimeoutError } from '../../../src/errors.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';

const log = pino({ level: 'silent' });
const REQ = 'persistent://tg/flow/probe-test-request';
const RES = 'non-persistent://tg/response/probe-test';

let transport: MemoryTransport | undefined;
let probe: AnswerProbe | undefined;
let floor: FloorResponder | undefined;
afterEach(async () => {
  await probe?.close();
  await floor?.stop();
  await transport?.close();
  probe = undefined;
  floor = undefined;
});

describe('AnswerProbe', () => {
  it('resolves once a responder that starts after it answers one of its requests', async () => {
    transport = new MemoryTransport();
    probe = await AnswerProbe.open(transport, REQ, RES);
    const before = performance.now();
    const answered = probe.answered(10_000);
    floor = await startFloorResponder({ transport, requestTopic: REQ, responseTopic: RES, subscription: 'floor', concurrency: 4, log });
    expect(await answered).toBeGreaterThanOrEqual(before);
  });

  it('does not count an answer with another id or another text', async () => {
    transport = new MemoryTransport();
    probe = await AnswerProbe.open(transport, REQ, RES);
    const producer = await transport.producer(RES);
    // Stray answers: not its ids, or its id with the wrong text.
    await producer.send({ data: encodeChunk('not the echo', true), properties: { id: 'someone-else' } });
    const sub = await transport.subscribe({ topic: REQ, subscription: 'wrong-responder', type: 'Shared' });
    const wrong = (async () => {
      for await (const msg of sub) {
        await producer.send({ data: encodeChunk('not the echo', true), properties: { id: msg.properties['id'] ?? '' } });
        await msg.ack();
      }
    })();
    await expect(probe.answered(300)).rejects.toBeInstanceOf(TimeoutError);
    await sub.stop();
    await wrong;
    await sub.close();
  });
});
