import pino from 'pino';
import { captureLogger } from '../../support/harness.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, TransportError } from '../../../src/errors.js';
import { createTransport, type PulsarNativeOptions } from '../../../src/assembly/create-transport.js';
import { tokenAccess } from '../../../src/assembly/broker-access.js';
import { loadPulsarClient } from '../../../src/transport/pulsar-native-client.js';
import { BATCH_MAX, BATCH_WAIT_MS } from '../../../src/transport/pulsar-native-consumer.js';
import type { Transport } from '../../../src/transport/transport.js';
import { FakeAuthenticationToken, FakeClient, fakeImporter, fakeMessage } from '../../fakes/fake-pulsar-client.js';

const log = pino({ level: 'silent' });
const TOPIC = 'persistent://public/default/native';
const until = (fn: () => void): Promise<void> => vi.waitFor(fn, { timeout: 5_000, interval: 5 });

describe('loadPulsarClient', () => {
  it('names pulsar-ws when the package is not installed', async () => {
    const missing = Object.assign(new Error("Cannot find package 'pulsar-client'"), { code: 'ERR_MODULE_NOT_FOUND' });
    const err = await loadPulsarClient(async () => Promise.reject(missing)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/not installed/);
    expect((err as Error).message).toMatch(/"pulsar-ws"/);
    expect((err as Error).cause).toBe(missing);
  });

  it('says the binary failed to load when the package is there but does not load', async () => {
    const err = await loadPulsarClient(async () => Promise.reject(new Error('libpulsar.so: cannot open shared object file'))).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/failed to load/);
    expect((err as Error).message).toMatch(/libpulsar\.so/);
  });

  it('accepts the CommonJS exports under default and rejects an unexpected shape', async () => {
    await expect(loadPulsarClient(fakeImporter)).resolves.toHaveProperty('Client', FakeClient);
    await expect(loadPulsarClient(async () => ({ default: { something: 1 } }))).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('PulsarNativeTransport (with a stand-in for pulsar-client)', () => {
  let transport: Transport | undefined;
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
  });
  /** A transport with these native settings, on a stand-in client. */
  const nativeTransport = (native: PulsarNativeOptions): Promise<Transport> =>
    createTransport({ kind: 'pulsar', serviceUrl: 'pulsar://b:6650', log, importer: fakeImporter, native });
  const open = async (token?: string): Promise<[Transport, FakeClient]> => {
    transport = await createTransport({
      kind: 'pulsar',
      adminUrl: 'http://broker:8080',
      ...(token ? { access: await tokenAccess(token, log) } : {}),
      log,
      importer: fakeImporter,
    });
    return [transport, FakeClient.last!];
  };

  it("logs libpulsar's INFO at debug, keeps its warnings and errors, and names the component once", async () => {
    const { log: captured, lines } = captureLogger('info');
    transport = await createTransport({ kind: 'pulsar', adminUrl: 'http://broker:8080', log: captured, importer: fakeImporter });
    const nativeLog = FakeClient.last!.config.log!;
    nativeLog(0, 'ClientConnection.cc', 1, 'debug chatter');
    nativeLog(1, 'ClientConnection.cc', 2, 'Connected to broker');
    nativeLog(2, 'ConsumerImpl.cc', 3, 'Reconnecting');
    nativeLog(3, 'ProducerImpl.cc', 4, 'Failed to send');
    const logged = lines()
      .map((l) => JSON.parse(l) as { level: number; detail: string; msg: string })
      .filter((l) => l.msg === 'libpulsar');
    expect(logged.map((l) => [l.level, l.detail])).toEqual([
      [40, 'Reconnecting'],
      [50, 'Failed to send'],
    ]);
    expect(lines()[0]!.match(/"component"/g)).toHaveLength(1);
  });

  // pulsar-client relays libpulsar's lines through a thread-safe function; one still queued when
  // the process exits aborts it (SIGABRT). libpulsar logs the end of its connections from its own
  // thread after close() resolved, so close() waits for its log to go quiet.
  it("closes only once libpulsar's log has gone quiet, the lines it wrote after the client closed included", async () => {
    const { log: captured, lines } = captureLogger('warn');
    const t = (transport = await createTransport({ kind: 'pulsar', adminUrl: 'http://broker:8080', log: captured, importer: fakeImporter }));
    const client = FakeClient.last!;
    const nativeLog = client.config.log!;
    client.afterClose = () => {
      setTimeout(() => {
        nativeLog(2, 'ClientConnection.cc', 1, 'Connection disconnected');
        setTimeout(() => nativeLog(2, 'ClientConnection.cc', 2, 'Destroyed connection'), 40);
      }, 20);
    };
    await t.close();
    const logged = lines().map((l) => (JSON.parse(l) as { detail: string }).detail);
    expect(logged).toEqual(['Connection disconnected', 'Destroyed connection']);
  });

  it('closes within its bound even while libpulsar keeps logging', async () => {
    const t = (transport = await createTransport({ kind: 'pulsar', adminUrl: 'http://broker:8080', log, importer: fakeImporter }));
    const client = FakeClient.last!;
    let chatter: NodeJS.Timeout | undefined;
    client.afterClose = () => {
      chatter = setInterval(() => client.config.log!(1, 'ClientImpl.cc', 1, 'still here'), 5);
    };
    try {
      await t.close();
      expect(client.closed).toBe(true);
    } finally {
      clearInterval(chatter);
    }
  });

  it("says once, at start, when the native client runs on glibc's malloc, and not when a faster allocator is preloaded", async () => {
    const maps = {
      glibc: '/usr/lib/x86_64-linux-gnu/libc.so.6\n',
      jemalloc: '/usr/lib/x86_64-linux-gnu/libc.so.6\n/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n',
    };
    for (const [allocator, map] of Object.entries(maps)) {
      const { log: captured, lines } = captureLogger('info');
      const t = await createTransport({
        kind: 'pulsar',
        serviceUrl: 'pulsar://b:6650',
        log: captured,
        importer: fakeImporter,
        native: { readMemoryMap: async () => map },
      });
      const hints = lines().filter((l) => l.includes("glibc's malloc"));
      expect(hints.length, allocator).toBe(allocator === 'glibc' ? 1 : 0);
      if (hints[0]) expect(JSON.parse(hints[0])).toMatchObject({ level: 30, preload: expect.stringContaining('libjemalloc.so.2') });
      await t.close();
    }
  });

  it("says a broker's refusal as the WebSocket transport does, naming the operation and namespace, and does not retry it", async () => {
    const [t, client] = await open('secret-token');
    client.refuseWith = 'AuthorizationError';
    const sub = await t.subscribe({ topic: 'non-persistent://tg/private/x', subscription: 's' }).catch((e: unknown) => e);
    expect(sub).toBeInstanceOf(TransportError);
    expect((sub as TransportError).retriable).toBe(false);
    expect((sub as Error).message).toMatch(/cannot subscribe to non-persistent:\/\/tg\/private\/x .*not authorized to consume on tg\/private/);
    const prod = await t.producer('non-persistent://tg/response/x').catch((e: unknown) => e);
    expect((prod as Error).message).toMatch(/not authorized to produce on tg\/response/);
    client.refuseWith = 'AuthenticationError';
    const auth = await t.producer('non-persistent://tg/response/y').catch((e: unknown) => e);
    expect((auth as Error).message).toMatch(/not authenticated: .*PULSAR_TOKEN/);
    expect((auth as Error).message).not.toContain('secret-token');
  });

  it('derives the service URL, authenticates with the token and batches its cached producer', async () => {
    const [t, client] = await open('secret-token');
    expect(t.kind).toBe('pulsar');
    expect(client.config.serviceUrl).toBe('pulsar://broker:6650');
    expect(client.config.authentication).toBeInstanceOf(FakeAuthenticationToken);
    const supplier = (client.config.authentication as FakeAuthenticationToken).params.token;
    expect(typeof supplier === 'function' ? await supplier() : supplier).toBe('secret-token');
    const p = await t.producer(TOPIC);
    expect(await t.producer(TOPIC)).toBe(p);
    await p.send({ data: 'hi', properties: { id: '1' } });
    expect(client.producers).toHaveLength(1);
    expect(client.producers[0]!.config).toMatchObject({ topic: TOPIC, batchingEnabled: true, blockIfQueueFull: true });
    expect(client.producers[0]!.sent[0]!.data.toString()).toBe('hi');
    expect(client.producers[0]!.sent[0]!.properties).toEqual({ id: '1' });
  });

  it('wraps a failed send in a TransportError naming the topic', async () => {
    const [t, client] = await open();
    const p = await t.producer(TOPIC);
    client.producers[0]!.failWith = new Error('Failed to send message: TimeOut');
    const err = await p.send({ data: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toContain(TOPIC);
  });

  it('subscribes with the mapped options and settles through the consumer', async () => {
    const [t, client] = await open();
    const sub = await t.subscribe({
      topic: TOPIC,
      subscription: 's',
      initialPosition: 'earliest',
      nackRedeliveryDelayMs: 500,
      receiverQueueSize: 7,
      deadLetter: { maxRedeliverCount: 3 },
    });
    const consumer = client.consumers[0]!;
    expect(consumer.config).toMatchObject({
      topic: TOPIC,
      subscription: 's',
      subscriptionType: 'Shared',
      subscriptionInitialPosition: 'Earliest',
      receiverQueueSize: 7,
      nAckRedeliverTimeoutMs: 500,
      deadLetterPolicy: { deadLetterTopic: `${TOPIC}-s-DLQ`, maxRedeliverCount: 3 },
    });
    const it = sub[Symbol.asyncIterator]();
    consumer.deliver(fakeMessage('a', { k: 'v' }, 2, 'id-a'));
    consumer.deliver(fakeMessage('b'));
    const a = (await it.next()).value!;
    expect([a.data.toString(), a.properties, a.redeliveryCount, a.messageId, a.topic]).toEqual(['a', { k: 'v' }, 2, 'id-a', TOPIC]);
    await a.ack();
    await a.ack(); // settling twice is a no-op
    const b = (await it.next()).value!;
    await b.nack();
    expect(consumer.acked.map((m) => m.getMessageId().toString())).toEqual(['id-a']);
    expect(consumer.nacked.map((m) => m.getMessageId().toString())).toEqual(['b']);
  });

  it('is connected with nothing open (a worker with no services yet), and not after close', async () => {
    const [t] = await open();
    expect(t.connected).toBe(true);
    await t.close();
    expect(t.connected).toBe(false);
  });

  it('sends a lone message at the end of the turn, and leaves sends under load to the batch timer', async () => {
    const [t, client] = await open();
    const p = await t.producer(TOPIC);
    const producer = client.producers[0]!;
    const turn = () => new Promise((r) => setImmediate(r));
    await p.send({ data: 'alone' });
    await turn();
    expect(producer.flushes).toBe(1);
    // Under load: the first send of the burst finds nothing in flight and flushes its turn;
    // sends that find others unconfirmed leave batching to libpulsar's timer.
    producer.hold = true;
    const burst = [p.send({ data: 'a' }), p.send({ data: 'b' })];
    await turn();
    expect(producer.flushes).toBe(2);
    burst.push(p.send({ data: 'c' }));
    await turn();
    expect(producer.flushes).toBe(2);
    producer.release();
    await Promise.all(burst);
    await p.send({ data: 'alone again' });
    await turn();
    expect(producer.flushes).toBe(3);
  });

  it('waits for messages without a receive timeout, so no subscription holds a threadpool thread; closing ends the wait', async () => {
    const [t, client] = await open();
    const subs = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((i) => t.subscribe({ topic: TOPIC, subscription: `s${i}` })));
    const consumer = client.consumers[0]!;
    await new Promise((r) => setTimeout(r, 50));
    consumer.deliver(fakeMessage('late'));
    const m = (await subs[0]![Symbol.asyncIterator]().next()).value!;
    expect(m.data.toString()).toBe('late');
    await m.ack();
    expect(client.consumers.map((c) => c.threadpoolReceives)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    // close() waits for the receive loop: it returns only because closing the consumer ended the pending receive().
    await Promise.all(subs.map((s) => s.close()));
    expect(client.consumers.every((c) => c.closed)).toBe(true);
  });

  it('takes a fast run of messages in batches; a lone message goes through receive() at once, and an idle subscription keeps no batch waiting', async () => {
    const [t, client] = await open();
    const sub = await t.subscribe({ topic: TOPIC, subscription: 's' });
    const consumer = client.consumers[0]!;
    expect(consumer.config.batchReceivePolicy).toEqual({ maxNumMessages: BATCH_MAX, maxNumBytes: 64 * 2 ** 20, timeoutMs: BATCH_WAIT_MS });
    const it = sub[Symbol.asyncIterator]();
    consumer.deliver(fakeMessage('lone'));
    expect((await it.next()).value!.data.toString()).toBe('lone');
    // A burst while the taker is busy: the client's queue fills, and batches take it.
    const burst = Array.from({ length: 5 * BATCH_MAX }, (_, i) => `m${i}`);
    for (const d of burst) consumer.deliver(fakeMessage(d));
    const got: string[] = [];
    while (got.length < burst.length) got.push((await it.next()).value!.data.toString());
    expect(got.sort()).toEqual([...burst].sort());
    expect(consumer.batchReceives).toBeGreaterThanOrEqual(4);
    expect(consumer.asyncReceives).toBeLessThan(burst.length / 4);
    expect(consumer.peakWaiting).toBe(1);
    // The backlog is gone: the last batch comes back short, and none is left waiting.
    await until(() => expect(consumer.pendingBatches).toBe(0));
    const batches = consumer.batchReceives;
    await new Promise((r) => setTimeout(r, 3 * BATCH_WAIT_MS));
    expect(consumer.batchReceives).toBe(batches);
    await sub.close();
  });

  it('on a non-persistent topic, makes no native acknowledge (the broker keeps nothing to ack) and reads no message id or redelivery count unasked', async () => {
    const [t, client] = await open();
    const sub = await t.subscribe({ topic: 'non-persistent://public/default/np', subscription: 's' });
    const consumer = client.consumers[0]!;
    const m = fakeMessage('a');
    const getMessageId = vi.spyOn(m, 'getMessageId');
    const getRedeliveryCount = vi.spyOn(m, 'getRedeliveryCount');
    const it = sub[Symbol.asyncIterator]();
    consumer.deliver(m);
    const taken = (await it.next()).value!;
    await taken.ack();
    expect(consumer.acked).toEqual([]);
    expect(getMessageId).not.toHaveBeenCalled();
    // Nothing is redelivered there: the count is 0 without a call into the binding.
    expect(getRedeliveryCount).not.toHaveBeenCalled();
    expect(taken.redeliveryCount).toBe(0);
    expect(taken.messageId).toBe('a');
    // A persistent topic's acks still reach the broker.
    const durable = await t.subscribe({ topic: TOPIC, subscription: 's' });
    client.consumers[1]!.deliver(fakeMessage('b'));
    await (await durable[Symbol.asyncIterator]().next()).value!.ack();
    expect(client.consumers[1]!.acked).toHaveLength(1);
    await Promise.all([sub.close(), durable.close()]);
  });

  it('spreads a non-persistent Shared subscription with a large queue over two broker connections, its queue split; others keep one', async () => {
    const [t, client] = await open();
    const before = FakeClient.made.length;
    const sub = await t.subscribe({ topic: 'non-persistent://public/default/np', subscription: 's', receiverQueueSize: 10_000 });
    const second = FakeClient.made.at(-1)!;
    expect(FakeClient.made.length - before).toBe(1);
    expect(second).not.toBe(client);
    expect([client.consumers[0]!.config.receiverQueueSize, second.consumers[0]!.config.receiverQueueSize]).toEqual([5000, 5000]);
    // Both consumers' messages come out of the one subscription.
    const it = sub[Symbol.asyncIterator]();
    client.consumers[0]!.deliver(fakeMessage('a'));
    second.consumers[0]!.deliver(fakeMessage('b'));
    const got = [(await it.next()).value!.data.toString(), (await it.next()).value!.data.toString()];
    expect(got.sort()).toEqual(['a', 'b']);
    // A second such subscription reuses the connections. Persistent and Exclusive ones, and
    // one with libpulsar's default queue (there for order, not bursts), take one consumer.
    await t.subscribe({ topic: 'non-persistent://public/default/np2', subscription: 's', receiverQueueSize: 4000 });
    await t.subscribe({ topic: TOPIC, subscription: 's', receiverQueueSize: 10_000 });
    await t.subscribe({ topic: 'non-persistent://public/default/np3', subscription: 'x', type: 'Exclusive', receiverQueueSize: 10_000 });
    await t.subscribe({ topic: 'non-persistent://public/default/np4', subscription: 's' });
    expect(FakeClient.made.length - before).toBe(1);
    expect(client.consumers.map((c) => c.config.receiverQueueSize)).toEqual([5000, 2000, 10_000, 10_000, undefined]);
    expect(second.consumers.map((c) => c.config.receiverQueueSize)).toEqual([5000, 2000]);
    await t.close();
    expect([client.closed, second.closed]).toEqual([true, true]);
  });

  it('keeps a non-persistent subscription on one connection when told to, and refuses a count below one', async () => {
    const before = FakeClient.made.length;
    const t = (transport = await nativeTransport({ nonPersistentConnections: 1 }));
    await t.subscribe({ topic: 'non-persistent://public/default/np', subscription: 's', receiverQueueSize: 10_000 });
    expect(FakeClient.made.length - before).toBe(1);
    expect(FakeClient.last!.consumers[0]!.config.receiverQueueSize).toBe(10_000);
    for (const bad of [0, 1.5])
      await expect(nativeTransport({ nonPersistentConnections: bad })).rejects.toThrow(/nonPersistentConnections must be a whole number of 1 or more/);
  });

  it('batches an ordered subscription (Exclusive, Failover) too, one fetch at a time, so its order is kept', async () => {
    const [t, client] = await open();
    const sub = await t.subscribe({ topic: TOPIC, subscription: 's', type: 'Exclusive' });
    const consumer = client.consumers[0]!;
    expect(consumer.config.batchReceivePolicy).toEqual({ maxNumMessages: BATCH_MAX, maxNumBytes: 64 * 2 ** 20, timeoutMs: BATCH_WAIT_MS });
    const it = sub[Symbol.asyncIterator]();
    const sent = Array.from({ length: 2 * BATCH_MAX + 7 }, (_, i) => `m${i}`);
    const got: string[] = [];
    // A fast run, then more while the subscription is taking batches (a batch waits for its timer).
    for (const d of sent.slice(0, BATCH_MAX + 3)) consumer.deliver(fakeMessage(d));
    while (got.length < BATCH_MAX) got.push((await it.next()).value!.data.toString());
    for (const d of sent.slice(BATCH_MAX + 3)) consumer.deliver(fakeMessage(d));
    while (got.length < sent.length) got.push((await it.next()).value!.data.toString());
    expect(got).toEqual(sent);
    expect(consumer.batchReceives).toBeGreaterThanOrEqual(2);
    // Never a receive beside a batch (the client would hand the next message to either).
    expect(consumer.peakWaiting).toBe(1);
    await sub.close();
  });

  it('on stop() ends iteration, and closes the consumer once the taken message is settled', async () => {
    const [t, client] = await open();
    const sub = await t.subscribe({ topic: TOPIC, subscription: 's' });
    const consumer = client.consumers[0]!;
    const it = sub[Symbol.asyncIterator]();
    consumer.deliver(fakeMessage('taken'));
    const taken = (await it.next()).value!;
    await sub.stop();
    expect((await it.next()).done).toBe(true);
    expect(consumer.closed).toBe(false);
    await taken.ack();
    expect(consumer.acked).toHaveLength(1);
    await until(() => expect(consumer.closed).toBe(true));
  });

  it('keeps its non-persistent sends within a window shared by all producers; persistent ones are not counted', async () => {
    const t = (transport = await nativeTransport({ nonPersistentInFlight: 2 }));
    const [a, b] = [await t.producer('non-persistent://public/default/a'), await t.producer('non-persistent://public/default/b')];
    const durable = await t.producer(TOPIC);
    const [pa, pb, pd] = FakeClient.last!.producers;
    pa!.hold = true;
    pb!.hold = true;
    pd!.hold = true;
    const sends = [a.send({ data: '1' }), b.send({ data: '2' }), a.send({ data: '3' }), durable.send({ data: 'd' })];
    await new Promise((r) => setImmediate(r));
    // Two in flight over both topics; the third waits for a place; the persistent one does not.
    expect([pa!.sent.length, pb!.sent.length, pd!.sent.length]).toEqual([1, 1, 1]);
    pb!.release();
    await until(() => expect(pa!.sent.length).toBe(2));
    pa!.release();
    pd!.release();
    await Promise.all(sends);
  });

  it('sends a non-persistent publish the broker dropped again, says so, and gives up at the send timeout', async () => {
    const { log: warned, lines } = captureLogger('warn');
    const t = (transport = await createTransport({
      kind: 'pulsar',
      serviceUrl: 'pulsar://b:6650',
      log: warned,
      importer: fakeImporter,
      native: { sendTimeoutMs: 300 },
    }));
    const p = await t.producer('non-persistent://public/default/np');
    const native = FakeClient.last!.producers[0]!;
    native.dropNext = 2;
    await p.send({ data: 'kept at the third' });
    expect(native.sent.map((m) => m.data.toString())).toEqual(['kept at the third', 'kept at the third', 'kept at the third']);
    expect(lines().filter((l) => l.includes('the broker dropped a non-persistent publish'))).toHaveLength(1);
    native.dropNext = 1_000;
    const before = native.sent.length;
    const err = await p.send({ data: 'never kept' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).retriable).toBe(true);
    const times = /dropped the publish to non-persistent:\/\/public\/default\/np (\d+) times within the send timeout of 300 ms/.exec((err as Error).message);
    expect(times).not.toBeNull();
    expect(native.sent.length - before).toBe(Number(times![1]));
    expect(Number(times![1])).toBeGreaterThan(2);
    // A persistent topic's receipts are not read for drops (its ids are real ledger positions).
    const durable = await t.producer(TOPIC);
    FakeClient.last!.producers[1]!.dropNext = 1;
    await durable.send({ data: 'once' });
    expect(FakeClient.last!.producers[1]!.sent).toHaveLength(1);
  });

  it('refuses a batch size libpulsar would end the process over', async () => {
    await expect(nativeTransport({ batchingMaxMessages: 1 })).rejects.toBeInstanceOf(ConfigError);
  });

  it('closes everything and refuses work afterwards', async () => {
    const [t, client] = await open();
    await t.producer(TOPIC);
    await t.subscribe({ topic: TOPIC, subscription: 's' });
    expect(t.connected).toBe(true);
    await Promise.all([t.close(), t.close()]);
    expect(client.closed).toBe(true);
    expect(client.consumers[0]!.closed).toBe(true);
    expect(client.producers[0]!.closed).toBe(true);
    expect(t.connected).toBe(false);
    await expect(t.producer(TOPIC)).rejects.toThrow(/closed/);
  });
});
