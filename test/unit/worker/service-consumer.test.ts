/**
 * One service's consumer on the memory transport: it opens the service's subscription and
 * its namespace's cancels, swaps instances on that same subscription, and retires or closes
 * with nothing it took cut short. The worker's part (dispatch, refuse) runs each request on
 * its instance's handler, as the worker does, without the global bound.
 */
import { setMaxListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../src/catalog/catalog.js';
import type { ToolService } from '../../../src/catalog/descriptors.js';
import { encodeRequest } from '../../../src/envelope/request.js';
import { CANCEL_PROPERTY } from '../../../src/envelope/properties.js';
import type { Observation, Plugin, ToolCall } from '../../../src/plugins/plugin.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { cancelTopic } from '../../../src/transport/topic-name.js';
import type { SubscribeOptions, Subscription } from '../../../src/transport/transport.js';
import { CancelListener } from '../../../src/worker/cancel-listener.js';
import { DEFAULT_LIMITS } from '../../../src/worker/limits.js';
import { ServiceConsumer, type ConsumerDeps } from '../../../src/worker/service-consumer.js';
import { captureLogger, catalogOf, entry, testRegistry } from '../../support/harness.js';
import { serviceDescriptor } from '../../support/descriptors.js';
import { ResponseCollector } from '../../support/worker-fixture.js';

const REQ = 'persistent://tg/flow/sc-request';
const RES = 'non-persistent://tg/response/sc';

/** The in-memory broker, every subscribe recorded. */
class RecordingTransport extends MemoryTransport {
  readonly seen: SubscribeOptions[] = [];
  override subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.seen.push(options);
    return super.subscribe(options);
  }
}

let transport: RecordingTransport;
let responses: ResponseCollector | undefined;
let consumer: ServiceConsumer | undefined;
let cancels: CancelListener | undefined;
afterEach(async () => {
  await consumer?.close(true);
  await cancels?.close();
  await responses?.close();
  await transport.close();
  consumer = cancels = responses = undefined;
});

/** A catalog of the one service `sc` (its descriptor's extra fields as given) and its tool. */
async function catalogWith(fields: Record<string, unknown> = {}): Promise<Catalog> {
  const behaviours = { any: () => 'unused' };
  return catalogOf(
    [
      entry(
        'tool-service',
        'sc',
        serviceDescriptor('sc', { 'request-queue': REQ, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'any' }, ...fields }),
      ),
      entry('tool', 'sc', { name: 'sc', service: 'sc' }),
    ],
    testRegistry(behaviours),
  );
}

/** A plugin whose close is recorded under its name. */
function plugin(name: string, closed: string[], invoke: (call: ToolCall) => Observation): Plugin {
  return {
    kind: 'test',
    invoke,
    close: async () => {
      closed.push(name);
    },
  };
}

/** A call that runs until `open()` lets it answer, or until its signal aborts. */
function gate(): { invoke: (call: ToolCall) => Observation; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return {
    open: () => open(),
    invoke: (call) =>
      new Promise<string>((resolve, reject) => {
        void opened.then(() => resolve('one'));
        call.signal.addEventListener('abort', () => reject(call.signal.reason as Error), { once: true });
      }),
  };
}

async function setup(first: Catalog, firstPlugin: Plugin): Promise<{ deps: ConsumerDeps; setCatalog: (c: Catalog) => void }> {
  transport = new RecordingTransport();
  responses = await ResponseCollector.on(transport, RES);
  const { log } = captureLogger();
  let catalog = first;
  cancels = new CancelListener(transport, log);
  const deps: ConsumerDeps = {
    transport,
    limits: { ...DEFAULT_LIMITS, nackDelayMs: 20 },
    log,
    hardStop: new AbortController().signal,
    counts: { received: 0, shed: 0 },
    catalog: () => catalog,
    interceptors: undefined,
    cancels,
    dispatch: (inst, msg, done, receivedAt) => {
      inst.enter();
      const settled = () => {
        inst.leave();
        done();
      };
      inst.handler.handle(msg, receivedAt).then(settled, settled);
    },
    refuse: (inst, msg, err) => {
      inst.enter();
      const settled = () => inst.leave();
      inst.handler.refuse(msg, err).then(settled, settled);
    },
  };
  consumer = await ServiceConsumer.open(first.services.get('sc')!, firstPlugin, deps);
  return { deps, setCatalog: (c) => (catalog = c) };
}

const send = async (id: string, properties: Record<string, string> = {}) =>
  (await transport.producer(REQ)).send({ data: encodeRequest({ config: {}, arguments: {} }), properties: { id, ...properties } });

const service = (c: Catalog): ToolService => c.services.get('sc')!;

describe('ServiceConsumer', () => {
  it("opens a Shared subscription with its service's prefetch, reads its namespace's cancels, and answers", async () => {
    const catalog = await catalogWith({ concurrency: 4 });
    await setup(
      catalog,
      plugin('v1', [], () => 'hello'),
    );
    expect(transport.seen.find((o) => o.topic === REQ)).toMatchObject({ subscription: service(catalog).subscription, type: 'Shared', receiverQueueSize: 8 });
    expect(transport.subscriptionNames(cancelTopic(REQ)!)).toHaveLength(1);
    await send('a');
    expect(await responses!.final('a')).toEqual([{ error: null, response: 'hello', endOfStream: true }]);
  });

  it("swaps instances on the same subscription, closing the old plugin once the old instance's calls have settled", async () => {
    const closed: string[] = [];
    const first = gate();
    const v1 = await catalogWith();
    const { setCatalog } = await setup(v1, plugin('v1', closed, first.invoke));
    const subscription = consumer!.subscription;
    await send('before');
    await responses!.waitFor(() => consumer!.current.inFlight === 1);
    const v2 = await catalogWith({ description: 'v2' });
    setCatalog(v2);
    const swapped = consumer!.swap(
      service(v2),
      plugin('v2', closed, () => 'two'),
    );
    await send('after');
    expect(await responses!.final('after')).toEqual([{ error: null, response: 'two', endOfStream: true }]);
    expect(closed).toEqual([]);
    first.open();
    expect(await responses!.final('before')).toEqual([{ error: null, response: 'one', endOfStream: true }]);
    await swapped;
    expect(closed).toEqual(['v1']);
    expect(consumer!.subscription).toBe(subscription);
    expect(transport.subscriptionNames(REQ)).toEqual([service(v2).subscription]);
  });

  it('lets a cancel reach a call of the instance a swap replaced', async () => {
    const closed: string[] = [];
    const first = gate();
    const v1 = await catalogWith();
    await setup(v1, plugin('v1', closed, first.invoke));
    await send('running');
    await responses!.waitFor(() => consumer!.current.inFlight === 1);
    const swapped = consumer!.swap(
      service(await catalogWith({ description: 'v2' })),
      plugin('v2', closed, () => 'two'),
    );
    await (await transport.producer(cancelTopic(REQ)!)).send({ data: '', properties: { [CANCEL_PROPERTY]: 'running' } });
    await swapped;
    expect(closed).toEqual(['v1']);
    expect((await responses!.final('running'))[0]!.error?.message).toMatch(/cancelled/);
  });

  it('retires: takes no more, lets what it took finish, then closes its plugin, unsubscribes and lets go of its cancels', async () => {
    const closed: string[] = [];
    const first = gate();
    await setup(await catalogWith(), plugin('v1', closed, first.invoke));
    await send('taken');
    await responses!.waitFor(() => consumer!.current.inFlight === 1);
    let retired = false;
    const retiring = consumer!.retire().then(() => (retired = true));
    expect(consumer!.stopped).toBe(true);
    await send('left');
    first.open();
    expect(await responses!.final('taken')).toEqual([{ error: null, response: 'one', endOfStream: true }]);
    await retiring;
    expect(retired).toBe(true);
    expect(closed).toEqual(['v1']);
    expect(responses!.byId.has('left')).toBe(false);
    expect(transport.subscriptionNames(REQ)).toEqual([]);
    await responses!.waitFor(() => transport.subscriptionNames(cancelTopic(REQ)!).length === 0);
  });

  it('closes at once, leaving a persistent subscription to the fleet unless told to unsubscribe', async () => {
    const closed: string[] = [];
    const catalog = await catalogWith();
    const { deps } = await setup(
      catalog,
      plugin('v1', closed, () => 'x'),
    );
    await consumer!.close(false);
    expect(closed).toEqual(['v1']);
    expect(transport.subscriptionNames(REQ)).toEqual([service(catalog).subscription]);
    consumer = await ServiceConsumer.open(
      service(catalog),
      plugin('v2', closed, () => 'x'),
      deps,
    );
    await consumer.close(true);
    expect(closed).toEqual(['v1', 'v2']);
    expect(transport.subscriptionNames(REQ)).toEqual([]);
  });

  it('says whether a changed service would be consumed just where it is', async () => {
    const catalog = await catalogWith({ concurrency: 4 });
    await setup(
      catalog,
      plugin('v1', [], () => 'x'),
    );
    const like = async (fields: Record<string, unknown>) => consumer!.consumesLike(service(await catalogWith(fields)));
    expect(await like({ concurrency: 4, description: 'other' })).toBe(true);
    expect(await like({ concurrency: 5 })).toBe(false); // twice the concurrency is the prefetch
    expect(await like({ concurrency: 4, subscription: 'elsewhere' })).toBe(false);
  });
});

describe('ServiceConsumer.openAll', () => {
  /** The in-memory broker, counting the subscribes in progress at once; each waits a turn or two. */
  class CountingTransport extends RecordingTransport {
    inProgress = 0;
    most = 0;
    override async subscribe(options: SubscribeOptions): Promise<Subscription> {
      this.most = Math.max(this.most, ++this.inProgress);
      try {
        await new Promise<void>((resolve) => setImmediate(resolve));
        return await super.subscribe(options);
      } finally {
        this.inProgress--;
      }
    }
  }

  async function openMany(count: number, busyTopic?: string): Promise<{ counting: CountingTransport; closed: string[]; result: ServiceConsumer[] | Error }> {
    const counting = new CountingTransport();
    transport = counting;
    const { log } = captureLogger();
    cancels = new CancelListener(counting, log);
    const services = await catalogOf(
      Array.from({ length: count }, (_, i) =>
        entry(
          'tool-service',
          `s${i}`,
          serviceDescriptor(
            `s${i}`,
            { plugin: { kind: 'test', behaviour: 'any' }, ...(i === 7 && busyTopic ? { subscription: 'taken' } : {}) },
            // Non-persistent: a subscription ends with its last consumer, so a closed one is seen gone.
            { requests: 'non-persistent' },
          ),
        ),
      ),
      testRegistry({ any: () => 'ok' }),
    );
    if (busyTopic) await counting.subscribe({ topic: services.services.get('s7')!.requestQueue, subscription: 'taken', type: 'Exclusive' });
    const closed: string[] = [];
    // As the worker's: each service's handler listens on it.
    const hardStop = new AbortController().signal;
    setMaxListeners(0, hardStop);
    const deps = {
      transport: counting,
      limits: DEFAULT_LIMITS,
      log,
      hardStop,
      counts: { received: 0, shed: 0 },
      catalog: () => services,
      interceptors: undefined,
      cancels,
      dispatch: () => undefined,
      refuse: () => undefined,
    } satisfies ConsumerDeps;
    const pairs = [...services.services.values()].map((s) => [s, plugin(s.id, closed, () => 'ok')] as const);
    const result = await ServiceConsumer.openAll(pairs, deps).catch((err: unknown) => err as Error);
    return { counting, closed, result };
  }

  it('opens every service, several at once but at most 16, in catalog order', async () => {
    const { counting, result } = await openMany(40);
    if (result instanceof Error) throw result;
    expect(result.map((c) => c.current.service.id)).toEqual(Array.from({ length: 40 }, (_, i) => `s${i}`));
    expect(counting.most).toBeGreaterThan(1);
    expect(counting.most).toBeLessThanOrEqual(16);
    await Promise.all(result.map((c) => c.close(true)));
  });

  it('closes every consumer and plugin when one service cannot be subscribed, and throws its error', async () => {
    const { counting, closed, result } = await openMany(20, 'busy');
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toMatch(/exclusive and already has a consumer/);
    expect([...closed].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `s${i}`).sort());
    for (const i of [0, 19]) expect(counting.subscriptionNames(serviceDescriptor(`s${i}`, {}, { requests: 'non-persistent' })['request-queue'])).toEqual([]);
  });
});
