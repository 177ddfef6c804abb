/**
 * The time a request waits for a slot (a CallContext's startedAt less its receivedAt, the
 * metrics' queue wait): none for a request that starts as it is taken, which reads no clock of
 * its own, and the wait itself for one held in the backlog or for a global slot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { CallContext, Interceptor } from '../../../src/worker/interceptor.js';
import { Worker } from '../../../src/worker/worker.js';
import { captureLogger, catalogOf, entry, pluginMaker, service, testRegistry, type Behaviour } from '../../support/harness.js';
import { ResponseCollector } from '../../support/worker-fixture.js';

const RES = 'non-persistent://tg/response/queue-time';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** A worker whose plugin holds each call until the test releases it; `seen` has each request's context. */
async function start(requestQueues: string[], limits: { concurrency?: number; serviceConcurrency: number }) {
  const held: (() => void)[] = [];
  const behaviour: Behaviour = (call: ToolCall) =>
    (async function* () {
      await new Promise<void>((resolve) => held.push(resolve));
      yield `answer ${call.requestId}`;
    })();
  const transport = new MemoryTransport();
  const entries = requestQueues.map((queue, n) =>
    entry(
      'tool-service',
      `s${n}`,
      service(`s${n}`, { 'request-queue': queue, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'b' }, concurrency: limits.serviceConcurrency }),
    ),
  );
  const catalog = await catalogOf(entries, testRegistry({ b: behaviour }));
  const { log } = captureLogger();
  const responses = await ResponseCollector.on(transport, RES);
  const seen = new Map<string, CallContext>();
  const record: Interceptor = (ctx, next) => {
    seen.set(ctx.message.properties['id']!, ctx);
    return next(ctx);
  };
  const worker = await Worker.create({
    transport,
    catalog,
    createPlugin: pluginMaker(testRegistry({ b: behaviour }), log),
    log,
    limits: { nackDelayMs: 20, ...(limits.concurrency !== undefined ? { concurrency: limits.concurrency } : {}) },
    interceptors: () => [record],
  });
  await worker.start();
  cleanup = async () => {
    for (const release of held.splice(0)) release();
    await worker.stop(100);
    await responses.close();
    await transport.close();
  };
  const send = async (queue: string, id: string) =>
    (await transport.producer(queue)).send({ data: JSON.stringify({ config: {}, arguments: {} }), properties: { id } });
  /** Let the oldest held call answer once `ready` holds. */
  const releaseWhen = async (ready: () => boolean) => {
    await responses.waitFor(ready, 5_000);
    held.shift()!();
  };
  return { worker, responses, seen, send, releaseWhen, held: () => held.length };
}

const waited = (ctx: CallContext | undefined): number => ctx!.startedAt - ctx!.receivedAt;

describe('queue wait', () => {
  it('is none for a request started as it came, and the wait for one held in the backlog', async () => {
    const np = 'non-persistent://tg/request/queue-time';
    const w = await start([np], { serviceConcurrency: 1 });
    await w.send(np, 'first');
    await w.send(np, 'second');
    // The second waits in the backlog while the first runs; it starts when the first answers.
    await w.releaseWhen(() => w.held() === 1 && w.worker.stats().queued === 1);
    await w.releaseWhen(() => w.held() === 1 && w.seen.has('second'));
    await w.responses.final('second');
    expect(waited(w.seen.get('first'))).toBe(0);
    expect(waited(w.seen.get('second'))).toBeGreaterThan(0);
  });

  it('is none for a persistent topic’s request, taken from the broker only once a slot freed', async () => {
    const p = 'persistent://tg/request/queue-time';
    const w = await start([p], { serviceConcurrency: 1 });
    await w.send(p, 'first');
    await w.send(p, 'second');
    await w.releaseWhen(() => w.held() === 1 && w.seen.size === 1);
    await w.releaseWhen(() => w.held() === 1 && w.seen.has('second'));
    await w.responses.final('second');
    expect(waited(w.seen.get('first'))).toBe(0);
    expect(waited(w.seen.get('second'))).toBe(0);
  });

  it('is the wait for a global slot held by another service', async () => {
    const a = 'persistent://tg/request/queue-time-a';
    const b = 'persistent://tg/request/queue-time-b';
    const w = await start([a, b], { concurrency: 1, serviceConcurrency: 1 });
    await w.send(a, 'a1');
    await w.responses.waitFor(() => w.held() === 1, 5_000);
    await w.send(b, 'b1');
    // b's intake took b1, and it waits for a1's slot.
    await w.releaseWhen(() => w.worker.stats().inFlight === 2);
    await w.releaseWhen(() => w.held() === 1 && w.seen.has('b1'));
    await w.responses.final('b1');
    expect(waited(w.seen.get('a1'))).toBe(0);
    expect(waited(w.seen.get('b1'))).toBeGreaterThan(0);
  });
});
