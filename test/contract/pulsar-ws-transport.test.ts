import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogger } from '../support/harness.js';
import { brokerDroppingPublishes } from '../support/dropping-broker.js';
import { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import { PayloadTooLargeError, TransportError } from '../../src/errors.js';
import { PulsarWsTransport } from '../../src/transport/pulsar-ws-transport.js';
import { subscriptionAdmin } from '../../src/assembly/create-transport.js';
import { take, transportContract } from './transport-contract.js';

const ADMIN_URL = process.env['PULSAR_ADMIN_URL'] ?? 'http://127.0.0.1:8080';
const log = pino({ level: process.env['LOG_LEVEL'] ?? 'silent' });
const topic = (persistent: boolean): string => `${persistent ? 'persistent' : 'non-persistent'}://public/default/ws-contract-${randomUUID()}`;

// With the admin call the composition root gives it: the contract subscribes at earliest.
const make = async (): Promise<PulsarWsTransport> =>
  new PulsarWsTransport({ kind: 'pulsar-ws', url: ADMIN_URL, log, connectTimeoutMs: 5_000, admin: subscriptionAdmin(ADMIN_URL, undefined) });

transportContract('pulsar-ws', make, {
  topic,
  nackDelayMs: 1_000,
  receiveTimeoutMs: 10_000,
  dispatched: async (t, s) => (await new PulsarAdminClient(ADMIN_URL).topicStats(t))?.subscriptions[s]?.msgOutCounter ?? 0,
});

describe('pulsar-ws specifics', () => {
  let transport: PulsarWsTransport | undefined;
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
  });

  it('names the topic when the broker refuses the upgrade', async () => {
    transport = await make();
    const missing = `persistent://no-such-tenant-${randomUUID().slice(0, 8)}/default/t`;
    const err = await transport.subscribe({ topic: missing, subscription: 's' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).message).toContain(missing);
    expect((err as TransportError).message).toMatch(/HTTP 404/);
    expect((err as TransportError).retriable).toBe(false);
  });

  it('opens an exclusive non-persistent subscription asked for more than 1,000 of room as one consumer', async () => {
    transport = await make();
    const t = topic(false);
    // Several consumers would share the room on a Shared subscription; an Exclusive one refuses a second.
    const sub = await transport.subscribe({ topic: t, subscription: 'excl-room', type: 'Exclusive', receiverQueueSize: 5_000 });
    await (await transport.producer(t)).send({ data: 'roomy' });
    expect((await take(sub[Symbol.asyncIterator](), 10_000)).data.toString()).toBe('roomy');
    await sub.close();
  });

  it('refuses a second consumer on a busy exclusive subscription with a clear 409', async () => {
    transport = await make();
    const t = topic(true);
    const first = await transport.subscribe({ topic: t, subscription: 'excl', type: 'Exclusive' });
    const err = await transport.subscribe({ topic: t, subscription: 'excl', type: 'Exclusive' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toMatch(/HTTP 409/);
    expect((err as Error).message).toContain(t);
    await first.close();
  });

  it('starts a new subscription at earliest when asked, and at latest by default', async () => {
    transport = await make();
    const t = topic(true);
    // Keep the topic's backlog: a subscription that exists before the send.
    const keeper = await transport.subscribe({ topic: t, subscription: 'keeper' });
    await (await transport.producer(t)).send({ data: 'before', properties: { n: '1' } });
    const early = await transport.subscribe({ topic: t, subscription: 'early', initialPosition: 'earliest' });
    const late = await transport.subscribe({ topic: t, subscription: 'late' });
    await (await transport.producer(t)).send({ data: 'after', properties: { n: '2' } });
    const itEarly = early[Symbol.asyncIterator]();
    const fromEarly: string[] = [];
    for (let i = 0; i < 2; i++) {
      const m = await take(itEarly, 10_000);
      fromEarly.push(m.data.toString());
      await m.ack();
    }
    expect(fromEarly.sort()).toEqual(['after', 'before']);
    const l1 = await take(late[Symbol.asyncIterator](), 10_000);
    expect(l1.data.toString()).toBe('after');
    await l1.ack();
    await keeper.close();
  });

  it('pipelines many sends and delivers them all', async () => {
    transport = await make();
    const t = topic(true);
    const sub = await transport.subscribe({ topic: t, subscription: 'bulk' });
    const producer = await transport.producer(t);
    const n = 500;
    await Promise.all(Array.from({ length: n }, (_, i) => producer.send({ data: `m${i}` })));
    const it = sub[Symbol.asyncIterator]();
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      const m = await take(it, 10_000);
      seen.add(m.data.toString());
      await m.ack();
    }
    expect(seen.size).toBe(n);
    expect(transport.connected).toBe(true);
  });

  it('rejects a payload larger than a WebSocket frame before sending it', async () => {
    transport = await make();
    const producer = await transport.producer(topic(true));
    await expect(producer.send({ data: Buffer.alloc(800 * 1024) })).rejects.toBeInstanceOf(PayloadTooLargeError);
    // The producer is still usable afterwards.
    await producer.send({ data: 'small' });
  });

  it('rejects a send whose signal is already aborted', async () => {
    transport = await make();
    const producer = await transport.producer(topic(true));
    await expect(producer.send({ data: 'x' }, AbortSignal.abort())).rejects.toThrow(/aborted/);
  });
});

describe('pulsar-ws on a broker that drops non-persistent publishes', () => {
  const broker = brokerDroppingPublishes();

  /**
   * Sends n messages to a new non-persistent topic, read as they come: what arrived, and what
   * the broker took in. `awaitArrival`: wait for all n to arrive (or 10 s without one).
   */
  const sendAll = async (senders: PulsarWsTransport[], n: number, awaitArrival: boolean): Promise<{ arrived: number; published: number }> => {
    const t = topic(false);
    const sub = await senders[0]!.subscribe({ topic: t, subscription: 'all', receiverQueueSize: 5_000 });
    const got = new Set<string>();
    // Ends when all arrived, after 10 s without one, or when the subscription closes; the count says which.
    const reading = (async () => {
      const it = sub[Symbol.asyncIterator]();
      while (got.size < n) got.add((await take(it, 10_000)).data.toString());
    })().catch(() => undefined);
    try {
      const producers = await Promise.all(senders.map((s) => s.producer(t)));
      await Promise.all(Array.from({ length: n }, (_, i) => producers[i % producers.length]!.send({ data: `m${i}` })));
      if (awaitArrival) await reading;
      const stats = await new PulsarAdminClient(broker().endpoints.adminUrl).topicStats(t);
      return { arrived: got.size, published: stats?.msgInCounter ?? 0 };
    } finally {
      await sub.close();
      await reading;
    }
  };
  const dropLines = (lines: string[]): string[] => lines.filter((l) => l.includes('the broker dropped a non-persistent publish'));

  it("keeps a producer's sends within the broker's limit, so that none is dropped", async () => {
    const { log: warned, lines } = captureLogger('warn');
    const t = new PulsarWsTransport({ kind: 'pulsar-ws', url: broker().endpoints.adminUrl, log: warned, nonPersistentInFlight: 40 });
    try {
      expect(await sendAll([t], 2_000, true)).toEqual({ arrived: 2_000, published: 2_000 });
      expect(dropLines(lines())).toEqual([]);
    } finally {
      await t.close();
    }
  }, 120_000);

  // The WebSocket service carries every client's publishes on its one connection to the broker,
  // so one client's window cannot keep others under the limit: here four clients whose windows
  // are past it. A drop's receipt comes out of order, and the service's own client then drops
  // that connection and sends its unconfirmed publishes again: some messages are published
  // twice, and a subscription on the same connection may lose some (its consumer reconnects).
  // So the measure is what the broker took in, against every send resolved.
  it('sends again what the broker dropped, so that every send is published', async () => {
    const { log: warned, lines } = captureLogger('warn');
    const open = (): PulsarWsTransport =>
      new PulsarWsTransport({ kind: 'pulsar-ws', url: broker().endpoints.adminUrl, log: warned, nonPersistentInFlight: 1_000 });
    const senders = [open(), open(), open(), open()];
    try {
      const { published } = await sendAll(senders, 2_000, false);
      expect(published).toBeGreaterThanOrEqual(2_000);
      // The broker did drop some: the resend, not luck, brought them.
      expect(dropLines(lines())).not.toEqual([]);
    } finally {
      await Promise.all(senders.map((s) => s.close()));
    }
  }, 120_000);
});
