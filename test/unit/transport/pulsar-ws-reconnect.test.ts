import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransportError } from '../../../src/errors.js';
import type { IncomingMessage } from '../../../src/transport/transport.js';
import { fakeWsSetup } from '../../fakes/fake-pulsar-ws.js';

const log = pino({ level: 'silent' });
const TOPIC = 'persistent://public/default/reconnect';
const NP_TOPIC = 'non-persistent://public/default/reconnect';
const until = (fn: () => void): Promise<void> => vi.waitFor(fn, { timeout: 5_000, interval: 10 });

async function next(it: AsyncIterator<IncomingMessage>): Promise<IncomingMessage> {
  const r = await it.next();
  if (r.done) throw new Error('subscription ended');
  return r.value;
}

describe('pulsar-ws reconnect (local fake endpoint)', () => {
  const setup = fakeWsSetup(log);
  const start = setup.start;
  afterEach(() => setup.stop());

  it('completes a send issued while the broker is away, once it is back', async () => {
    const [server, t] = await start();
    const producer = await t.producer(TOPIC);
    await producer.send({ data: 'first' });
    expect(t.connected).toBe(true);

    server.refuseWith = { status: 503 };
    server.dropAll();
    await until(() => expect(t.connected).toBe(false));
    const during = producer.send({ data: 'during outage', properties: { k: 'v' } });
    server.refuseWith = undefined;
    await during;

    expect(t.connected).toBe(true);
    const sent = server.received.filter((r) => r.path.includes('/producer/'));
    expect(sent.map((r) => Buffer.from(String(r.frame['payload']), 'base64').toString())).toEqual(['first', 'during outage']);
    expect(sent[1]!.conn).toBe(2);
    expect(sent[1]!.frame['properties']).toEqual({ k: 'v' });
  });

  it('resends a message the broker never confirmed before the connection dropped', async () => {
    const [server, t] = await start();
    const producer = await t.producer(TOPIC);
    server.holdReplies = true;
    const pending = producer.send({ data: 'unconfirmed' });
    await until(() => expect(server.received).toHaveLength(1));
    server.holdReplies = false;
    server.dropAll();
    await pending;
    expect(server.received.map((r) => r.conn)).toEqual([1, 2]);
    expect(server.received[1]!.frame['payload']).toBe(server.received[0]!.frame['payload']);
  });

  it('sends again a non-persistent publish the broker dropped, and resolves once it is kept', async () => {
    const [server, t] = await start();
    const producer = await t.producer(NP_TOPIC);
    server.dropPublishes = 2;
    await producer.send({ data: 'dropped twice' });
    const payloads = server.received.map((r) => Buffer.from(String(r.frame['payload']), 'base64').toString());
    expect(payloads).toEqual(['dropped twice', 'dropped twice', 'dropped twice']);
  });

  it('sends a publish the broker keeps dropping until the send timeout, then fails it with a retriable TransportError', async () => {
    const [server, t] = await start({ sendTimeoutMs: 300 });
    const producer = await t.producer(NP_TOPIC);
    server.dropPublishes = 1_000;
    const err = await producer.send({ data: 'never kept' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).retriable).toBe(true);
    const times = /dropped the publish .* (\d+) times within the send timeout of 300 ms/.exec((err as Error).message);
    expect(times).not.toBeNull();
    // Every drop it counts is a send the broker got; the pauses between them leave room for several.
    expect(server.received).toHaveLength(Number(times![1]));
    expect(server.received.length).toBeGreaterThan(2);
  });

  it("takes a persistent topic's receipt as it is: no drop there", async () => {
    const [server, t] = await start();
    const producer = await t.producer(TOPIC);
    server.dropPublishes = 1;
    await producer.send({ data: 'once' });
    expect(server.received).toHaveLength(1);
  });

  it('fails a send that stays unconfirmed past sendTimeoutMs with a TransportError', async () => {
    const [server, t] = await start({ sendTimeoutMs: 100 });
    const producer = await t.producer(TOPIC);
    server.holdReplies = true;
    await expect(producer.send({ data: 'lost' })).rejects.toThrow(TransportError);
  });

  it('aborts a send waiting for the broker when its signal fires', async () => {
    const [server, t] = await start();
    const producer = await t.producer(TOPIC);
    server.refuseWith = { status: 503 };
    server.dropAll();
    await until(() => expect(t.connected).toBe(false));
    const ac = new AbortController();
    const waiting = producer.send({ data: 'never' }, ac.signal);
    ac.abort();
    await expect(waiting).rejects.toThrow(/aborted/);
  });

  it('resubscribes after a drop, keeps delivering, and settles stale messages without throwing', async () => {
    const [server, t] = await start();
    const sub = await t.subscribe({ topic: TOPIC, subscription: 's' });
    const it = sub[Symbol.asyncIterator]();
    await until(() => expect(server.openSockets).toBe(1));
    // Written in one tick, so 'untaken' is already here when 'before' is taken. It is never
    // taken on that connection: the broker would redeliver it, so it must not be handed out.
    server.push('before');
    server.push('untaken');
    const before = await next(it);
    expect(before.data.toString()).toBe('before');
    server.dropAll();
    await until(() => expect(server.connections).toHaveLength(2));
    await until(() => expect(t.connected).toBe(true));
    const afterId = server.push('after');
    const after = await next(it);
    expect(after.data.toString()).toBe('after');

    await expect(before.ack()).resolves.toBeUndefined();
    await after.ack();
    await until(() => expect(server.received.some((r) => r.frame['messageId'] === afterId)).toBe(true));
    const acks = server.received.filter((r) => r.path.includes('/consumer/'));
    expect(acks).toEqual([expect.objectContaining({ conn: 2, frame: { messageId: afterId } })]);
  });

  it('keeps a message the broker pushes in the same moment the socket opens', async () => {
    const [server, t] = await start();
    server.pushOnConnect = ['backlog-1', 'backlog-2'];
    for (let i = 0; i < 5; i++) {
      const sub = await t.subscribe({ topic: TOPIC, subscription: `s${i}` });
      const it = sub[Symbol.asyncIterator]();
      expect((await next(it)).data.toString()).toBe('backlog-1');
      expect((await next(it)).data.toString()).toBe('backlog-2');
      await sub.close();
    }
  });

  it('still hands out untaken messages of a non-persistent topic after a drop (they are not redelivered)', async () => {
    const [server, t] = await start();
    const sub = await t.subscribe({ topic: NP_TOPIC, subscription: 's' });
    const it = sub[Symbol.asyncIterator]();
    await until(() => expect(server.openSockets).toBe(1));
    // Written in one tick: 'held-2' has arrived by the time 'held' is taken.
    server.push('held');
    server.push('held-2');
    const first = await next(it);
    expect(first.data.toString()).toBe('held');
    server.dropAll();
    await until(() => expect(server.connections).toHaveLength(2));
    const second = await next(it);
    expect(second.data.toString()).toBe('held-2');
    await expect(second.ack()).resolves.toBeUndefined();
  });

  it('drops a socket whose peer stops answering pings, and reconnects', async () => {
    const [server, t] = await start({ pingIntervalMs: 30 }, false);
    await t.producer(TOPIC);
    await until(() => expect(server.connections.length).toBeGreaterThanOrEqual(2));
  });

  it('turns a refused upgrade into a TransportError naming the topic and the reason', async () => {
    const [server, t] = await start();
    server.refuseWith = {
      status: 400,
      body: '<html><head><title>Error 400 Invalid query params: Invalid subscriptionType Bogus</title></head></html>',
    };
    const err = await t.subscribe({ topic: TOPIC, subscription: 's' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toContain(TOPIC);
    expect((err as Error).message).toContain('Invalid subscriptionType Bogus');
    expect((err as TransportError).retriable).toBe(false);
  });

  it('gives up opening after connectTimeoutMs while the broker keeps failing', async () => {
    const [server, t] = await start({ connectTimeoutMs: 200 });
    server.refuseWith = { status: 503 };
    await expect(t.producer(TOPIC)).rejects.toThrow(/within 200 ms/);
    // A failed open is not cached: the next call tries again.
    server.refuseWith = undefined;
    await expect(t.producer(TOPIC)).resolves.toBeDefined();
  });

  it('closes idempotently and stops reconnecting', async () => {
    const [server, t] = await start();
    await t.producer(TOPIC);
    await t.subscribe({ topic: TOPIC, subscription: 's' });
    await Promise.all([t.close(), t.close()]);
    await until(() => expect(server.openSockets).toBe(0));
    expect(t.connected).toBe(false);
    await expect(t.subscribe({ topic: TOPIC, subscription: 's' })).rejects.toThrow(/closed/);
  });
});
