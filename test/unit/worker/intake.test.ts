/**
 * The intake loops on the memory transport: a persistent topic is taken no faster than its
 * service may run it; a non-persistent one is taken whole, what cannot start waiting in a
 * bounded backlog. The worker's part (dispatch, refuse) is a recorder here.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../src/catalog/catalog.js';
import type { UnavailableError } from '../../../src/errors.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { IncomingMessage, Subscription } from '../../../src/transport/transport.js';
import { consumeAll, consumeTaking, type Intake, type IntakeDeps } from '../../../src/worker/intake.js';
import { DEFAULT_LIMITS, type WorkerLimits } from '../../../src/worker/limits.js';
import { RequestHandler } from '../../../src/worker/request-handler.js';
import { ServiceInstance } from '../../../src/worker/service-instance.js';
import { captureLogger, catalogOf, entry, pluginMaker, testRegistry, type Behaviour } from '../../support/harness.js';
import { serviceDescriptor } from '../../support/descriptors.js';

const PERSISTENT = 'persistent://tg/flow/in-request';
const NON_PERSISTENT = 'non-persistent://tg/request/in';

const ok: Behaviour = () => 'ok';

let transport: MemoryTransport | undefined;
let hardStop: AbortController | undefined;
afterEach(async () => {
  hardStop?.abort();
  await transport?.close();
  transport = undefined;
});

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(5);
  }
}

interface Rig {
  source: { subscription: Subscription; current: ServiceInstance; stopped: boolean };
  intake: Intake;
  deps: IntakeDeps;
  /** Requests dispatched, in order, each with the instance it went to and its `done`. */
  taken: { inst: ServiceInstance; msg: IncomingMessage; done: () => void }[];
  refused: UnavailableError[];
  instance(concurrency: number): ServiceInstance;
  send(n: number): Promise<void>;
}

async function rig(topic: string, concurrency: number, limits: Partial<WorkerLimits> = {}): Promise<Rig> {
  transport = new MemoryTransport();
  hardStop = new AbortController();
  const { log } = captureLogger();
  const registry = testRegistry({ ok });
  const catalog: Catalog = await catalogOf(
    [entry('tool-service', 'in', serviceDescriptor('in', { 'request-queue': topic, plugin: { kind: 'test', behaviour: 'ok' } }))],
    registry,
  );
  const service = catalog.services.get('in')!;
  const plugin = (await pluginMaker(registry)(service))!;
  const all = { ...DEFAULT_LIMITS, ...limits };
  const subscription = await transport.subscribe({ topic, subscription: 'in', type: 'Shared', receiverQueueSize: 1000 });
  const signal = hardStop.signal;
  const instance = (n: number) =>
    new ServiceInstance(
      service,
      plugin,
      new RequestHandler({
        service,
        catalog: () => catalog,
        plugin,
        transport: transport!,
        limits: all,
        log,
        hardStop: signal,
        redeliverable: subscription.redeliverable,
      }),
      n,
    );
  const taken: Rig['taken'] = [];
  const refused: UnavailableError[] = [];
  const deps: IntakeDeps = {
    limits: all,
    log,
    hardStop: signal,
    counts: { received: 0, shed: 0 },
    dispatch: (inst, msg, done) => taken.push({ inst, msg, done }),
    refuse: (_inst, _msg, err) => refused.push(err),
  };
  const source = { subscription, current: instance(concurrency), stopped: false };
  const intake = subscription.redeliverable ? consumeTaking(source, deps) : consumeAll(source, deps);
  const producer = await transport.producer(topic);
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) await producer.send({ data: `{"n":${i}}`, properties: { id: `r${i}` } });
  };
  return { source, intake, deps, taken, refused, instance, send };
}

describe('intake of a persistent topic', () => {
  it('takes no more than the service may run, and one more as each settles', async () => {
    const r = await rig(PERSISTENT, 2);
    await r.send(5);
    await until(() => r.taken.length === 2, 'two taken');
    r.taken[0]!.done();
    await until(() => r.taken.length === 3, 'a third taken once one settled');
    r.source.stopped = true;
    r.intake.wake();
    await r.intake.done;
    expect(r.taken.map((t) => t.msg.properties['id'])).toEqual(['r0', 'r1', 'r2']);
    expect(r.deps.counts.received).toBe(3);
    expect(r.intake.queued).toBe(0);
  });

  it('leaves at once when stopped and woken, without waiting for a slot to free', async () => {
    const r = await rig(PERSISTENT, 1);
    await r.send(2);
    await until(() => r.taken.length === 1, 'one taken');
    r.source.stopped = true;
    r.intake.wake();
    await r.intake.done;
    expect(r.taken).toHaveLength(1);
  });

  it('takes up to the new bound when woken after its instance was swapped for a larger one', async () => {
    const r = await rig(PERSISTENT, 1);
    await r.send(4);
    await until(() => r.taken.length === 1, 'one taken');
    const larger = r.instance(3);
    r.source.current = larger;
    r.intake.wake();
    await until(() => r.taken.length === 3, 'three taken');
    expect(r.taken.map((t) => t.inst)).toEqual([r.taken[0]!.inst, larger, larger]);
    r.source.stopped = true;
    r.intake.wake();
    await r.intake.done;
    expect(r.taken).toHaveLength(3);
  });
});

describe('intake of a non-persistent topic', () => {
  it('takes every request at once, starts up to the bound and backlogs the rest, in order as slots free', async () => {
    const r = await rig(NON_PERSISTENT, 2);
    await r.send(5);
    await until(() => r.deps.counts.received === 5, 'all taken off the topic');
    expect(r.taken).toHaveLength(2);
    expect(r.intake.queued).toBe(3);
    r.taken[1]!.done();
    expect(r.taken).toHaveLength(3);
    expect(r.intake.queued).toBe(2);
    r.taken[0]!.done();
    r.taken[2]!.done();
    expect(r.taken.map((t) => t.msg.properties['id'])).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(r.intake.queued).toBe(0);
  });

  it('answers unavailable past its backlog bound, and counts each one shed', async () => {
    const r = await rig(NON_PERSISTENT, 1, { backlogMessages: 2 });
    await r.send(6);
    await until(() => r.deps.counts.received === 6, 'all taken off the topic');
    expect([r.taken.length, r.intake.queued, r.refused.length, r.deps.counts.shed]).toEqual([1, 2, 3, 3]);
    expect(r.refused.map((e) => e.code)).toEqual(['unavailable', 'unavailable', 'unavailable']);
    expect(r.refused[0]!.message).toMatch(/backlog is full/);
  });

  it('starts its whole backlog at once when the hard stop comes', async () => {
    const r = await rig(NON_PERSISTENT, 1);
    await r.send(4);
    await until(() => r.deps.counts.received === 4, 'all taken off the topic');
    expect(r.intake.queued).toBe(3);
    hardStop!.abort();
    expect(r.taken).toHaveLength(4);
    expect(r.intake.queued).toBe(0);
  });

  it('ends, once its subscription stops, only after every request of its backlog has started', async () => {
    const r = await rig(NON_PERSISTENT, 1);
    await r.send(3);
    await until(() => r.deps.counts.received === 3, 'all taken off the topic');
    let startedAtEnd: number | undefined;
    const ended = r.intake.done.then(() => (startedAtEnd = r.taken.length));
    r.source.stopped = true;
    await r.source.subscription.stop();
    for (let i = 0; i < 3; i++) {
      await until(() => r.taken.length > i, `request ${i} started`);
      r.taken[i]!.done();
    }
    await ended;
    expect(startedAtEnd).toBe(3);
  });
});
