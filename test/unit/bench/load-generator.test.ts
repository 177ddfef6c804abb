import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFloorResponder, type FloorResponder } from '../../../bench/floor-responder.js';
import { runLoad } from '../../../bench/load-generator.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { SEQ_PROPERTY } from '../../../src/envelope/properties.js';

const log = pino({ level: 'silent' });
const REQ = 'persistent://tg/flow/bench-test-request';
const RES = 'non-persistent://tg/response/bench-test';

let transport: MemoryTransport | undefined;
let floor: FloorResponder | undefined;
afterEach(async () => {
  await floor?.stop();
  await transport?.close();
  floor = undefined;
});

async function setup(concurrency = 8) {
  transport = new MemoryTransport();
  floor = await startFloorResponder({ transport, requestTopic: REQ, responseTopic: RES, subscription: 'floor', concurrency, log });
  return transport;
}

type Send = (text: string, end: boolean, seq?: number) => Promise<void>;

/** A memory transport whose responder answers request n (from 0, the readiness probe) as `script` says. */
async function scriptedResponder(script: (n: number, send: Send) => Promise<void>): Promise<MemoryTransport> {
  const t = new MemoryTransport();
  const sub = await t.subscribe({ topic: REQ, subscription: 'scripted' });
  const producer = await t.producer(RES);
  let n = 0;
  void (async () => {
    for await (const m of sub) {
      await m.ack();
      const id = m.properties['id']!;
      await script(n++, (text, end, seq) =>
        producer.send({
          data: JSON.stringify({ error: null, response: text, end_of_stream: end }),
          properties: seq === undefined ? { id } : { id, [SEQ_PROPERTY]: String(seq) },
        }),
      );
    }
  })();
  return t;
}

describe('runLoad against the floor responder (memory transport)', () => {
  it('sends exactly the asked number of requests with K in flight and records every answer', async () => {
    const t = await setup();
    const r = await runLoad({
      transport: t,
      requestTopic: REQ,
      responseTopic: RES,
      concurrency: 8,
      requests: 500,
      warmupMs: 0,
      shape: { argumentBytes: 1024, chunks: 0 },
      stream: false,
      answerTimeoutMs: 5_000,
      readyTimeoutMs: 5_000,
      log,
    });
    expect(r.requests).toBe(500);
    expect(r.answered).toBe(500);
    expect(r.latency.count).toBe(500);
    expect(r.errors + r.timeouts + r.wrongAnswers).toBe(0);
    expect(r.responseMessages).toBe(500);
    expect(r.throughputPerSec).toBeGreaterThan(0);
    expect(floor!.answered()).toBe(501); // and the readiness probe
  });

  it('joins a streamed answer and counts each of its messages', async () => {
    const t = await setup();
    const r = await runLoad({
      transport: t,
      requestTopic: REQ,
      responseTopic: RES,
      concurrency: 4,
      requests: 50,
      warmupMs: 0,
      shape: { argumentBytes: 1024, chunks: 10 },
      stream: true,
      answerTimeoutMs: 5_000,
      readyTimeoutMs: 5_000,
      log,
    });
    expect(r.answered).toBe(50);
    expect(r.wrongAnswers).toBe(0);
    // The floor streams one message per chunk plus the final one.
    expect(r.responseMessages).toBe(50 * 11);
  });

  it('counts a request nobody answers as a timeout, without stretching the measured time', async () => {
    // A responder that answers only the readiness probe, then goes quiet.
    transport = await scriptedResponder(async (n, send) => {
      if (n === 0) await send('', true);
    });
    const r = await runLoad({
      transport,
      requestTopic: REQ,
      responseTopic: RES,
      concurrency: 2,
      requests: 2,
      warmupMs: 0,
      shape: { argumentBytes: 64, chunks: 0 },
      stream: false,
      answerTimeoutMs: 300,
      readyTimeoutMs: 5_000,
      log,
    });
    expect(r.timeouts).toBe(2);
    expect(r.answered).toBe(0);
    expect(r.elapsedMs).toBeLessThan(300);
  });

  it('counts a streamed answer with a missing message as an error at once, not as a wrong answer or a timeout', async () => {
    // The readiness probe gets a whole answer; every later one loses its message 1.
    transport = await scriptedResponder(async (n, send) => {
      if (n === 0) return send('', true, 0);
      await send('a', false, 0);
      await send('', true, 2);
    });
    const r = await runLoad({
      transport,
      requestTopic: REQ,
      responseTopic: RES,
      concurrency: 2,
      requests: 4,
      warmupMs: 0,
      shape: { argumentBytes: 64, chunks: 2 },
      stream: true,
      answerTimeoutMs: 60_000,
      readyTimeoutMs: 5_000,
      log,
    });
    expect(r.errors).toBe(4);
    expect(r.answered + r.timeouts + r.wrongAnswers).toBe(0);
  });
});
