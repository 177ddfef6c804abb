/**
 * How much of a burst a non-persistent request topic's subscription may take from the broker:
 * by transport when unset (the native client's receiver queue is all the room there is), the
 * setting when set. A persistent one takes twice its concurrency and leaves the rest.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { SubscribeOptions, Subscription } from '../../../src/transport/transport.js';
import { catalogOf, entry, testRegistry, type Behaviour } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

/** The in-memory broker under another transport's name, every subscribe recorded. */
class NamedTransport extends MemoryTransport {
  readonly seen: SubscribeOptions[] = [];
  constructor(name: string) {
    super();
    Object.defineProperty(this, 'kind', { value: name });
  }
  override subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.seen.push(options);
    return super.subscribe(options);
  }
}

const ok: Behaviour = () =>
  (async function* () {
    yield 'x';
  })();

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function prefetchOf(transportKind: string, requestQueue: string, setting?: number): Promise<number | undefined> {
  const catalog = await catalogOf(
    [entry('tool-service', 'p', service('p', { 'request-queue': requestQueue, plugin: { kind: 'test', behaviour: 'ok' }, concurrency: 8 }))],
    testRegistry({ ok }),
  );
  const transport = new NamedTransport(transportKind);
  fx = await startFixture(catalog, { ok }, 'non-persistent://tg/response/p', setting === undefined ? {} : { nonPersistentPrefetch: setting }, { transport });
  return transport.seen.find((o) => o.topic === requestQueue)?.receiverQueueSize;
}

describe('the prefetch of a request topic', () => {
  const NP = 'non-persistent://tg/request/p';

  it('is 10,000 on the native client and 4,000 on pulsar-ws when unset, for a non-persistent topic', async () => {
    expect(await prefetchOf('pulsar', NP)).toBe(10_000);
    await fx?.close();
    expect(await prefetchOf('pulsar-ws', NP)).toBe(4_000);
  });

  it('is the setting when set, on either transport', async () => {
    expect(await prefetchOf('pulsar', NP, 1_500)).toBe(1_500);
    await fx?.close();
    expect(await prefetchOf('pulsar-ws', NP, 1_500)).toBe(1_500);
  });

  it('is twice the concurrency on a persistent topic, whatever the setting', async () => {
    expect(await prefetchOf('pulsar', 'persistent://tg/flow/p-request', 1_500)).toBe(16);
  });
});
