/**
 * The time a request waits for a slot (a CallInput's startedAt less its receivedAt, the
 * metrics' queue wait): none for a request that starts as it is taken, which reads no clock of
 * its own, and the wait itself for one held in the backlog or for a global slot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import type { CallInput, Interceptor } from '../../../src/worker/interceptor.js';
import { catalogOf, entry, testRegistry, type Behaviour } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const RES = 'non-persistent://tg/response/queue-time';

let fx: Fixture | undefined;
let release: (() => void)[] = [];
afterEach(async () => {
  for (const r of release.splice(0)) r();
  await fx?.close();
  fx = undefined;
});

/** A worker whose plugin holds each call until the test releases it; `seen` has each request's context by id. */
async function start(requestQueues: string[], limits: { concurrency?: number; serviceConcurrency: number }) {
  release = [];
  const held = release;
  const behaviour: Behaviour = (call: ToolCall) =>
    (async function* () {
      await new Promise<void>((resolve) => held.push(resolve));
      yield `answer ${call.requestId}`;
    })();
  const services = requestQueues.map((queue, n) =>
    entry(
      'tool-service',
      `s${n}`,
      service(`s${n}`, { 'request-queue': queue, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'b' }, concurrency: limits.serviceConcurrency }),
    ),
  );
  const catalog = await catalogOf(services, testRegistry({ b: behaviour }));
  const seen = new Map<string, CallInput>();
  const record: Interceptor = (input, next) => {
    seen.set(input.message.properties['id']!, input);
    return next(input);
  };
  const f = await startFixture(catalog, { b: behaviour }, RES, limits.concurrency === undefined ? {} : { concurrency: limits.concurrency }, {
    interceptors: () => [record],
  });
  fx = f;
  const send = (queue: string, id: string) => f.send(queue, JSON.stringify({ config: {}, arguments: {} }), { id });
  /** Let the oldest held call answer once `ready` holds. */
  const releaseWhen = async (ready: () => boolean) => {
    await f.responses.waitFor(ready, 5_000);
    held.shift()!();
  };
  return { f, seen, send, releaseWhen, held: () => held.length };
}

const waited = (input: CallInput | undefined): number => input!.startedAt - input!.receivedAt;

describe('queue wait', () => {
  it('is none for a request started as it came, and the wait for one held in the backlog', async () => {
    const np = 'non-persistent://tg/request/queue-time';
    const w = await start([np], { serviceConcurrency: 1 });
    await w.send(np, 'first');
    await w.send(np, 'second');
    // The second waits in the backlog while the first runs; it starts when the first answers.
    await w.releaseWhen(() => w.held() === 1 && w.f.worker.stats().queued === 1);
    await w.releaseWhen(() => w.held() === 1 && w.seen.has('second'));
    await w.f.responses.final('second');
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
    await w.f.responses.final('second');
    expect(waited(w.seen.get('first'))).toBe(0);
    expect(waited(w.seen.get('second'))).toBe(0);
  });

  it('is the wait for a global slot held by another service', async () => {
    const a = 'persistent://tg/request/queue-time-a';
    const b = 'persistent://tg/request/queue-time-b';
    const w = await start([a, b], { concurrency: 1, serviceConcurrency: 1 });
    await w.send(a, 'a1');
    await w.f.responses.waitFor(() => w.held() === 1, 5_000);
    await w.send(b, 'b1');
    // b's intake took b1, and it waits for a1's slot.
    await w.releaseWhen(() => w.f.worker.stats().inFlight === 2);
    await w.releaseWhen(() => w.held() === 1 && w.seen.has('b1'));
    await w.f.responses.final('b1');
    expect(waited(w.seen.get('a1'))).toBe(0);
    expect(waited(w.seen.get('b1'))).toBeGreaterThan(0);
  });
});
