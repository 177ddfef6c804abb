import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PulsarWsTransport } from '../../../src/transport/pulsar-ws-transport.js';
import { FakePulsarWs } from './fake-pulsar-ws.js';

const log = pino({ level: 'silent' });
const until = (fn: () => void): Promise<void> => vi.waitFor(fn, { timeout: 5_000, interval: 10 });

describe('pulsar-ws subscription while its broker is away (local fake endpoint)', () => {
  let fake: FakePulsarWs | undefined;
  let transport: PulsarWsTransport | undefined;

  afterEach(async () => {
    await transport?.close();
    await fake?.stop();
    transport = undefined;
    fake = undefined;
  });

  it('does not hand out a persistent message pushed on the lost socket, even before a reconnect', async () => {
    const server = (fake = await FakePulsarWs.start());
    const t = (transport = new PulsarWsTransport({ kind: 'pulsar-ws', url: server.url, log, connectTimeoutMs: 2_000, reconnect: { initialDelayMs: 10, maxDelayMs: 50 } }));
    const sub = await t.subscribe({ topic: 'persistent://public/default/outage', subscription: 's' });
    const it = sub[Symbol.asyncIterator]();
    await until(() => expect(server.openSockets).toBe(1));
    // Written in one tick: 'untaken' is queued here by the time 'before' is taken.
    server.push('before');
    server.push('untaken');
    const first = await it.next();
    expect(first.value?.data.toString()).toBe('before');

    server.refuseWith = { status: 503 };
    server.dropAll();
    await until(() => expect(t.connected).toBe(false));
    // The broker redelivers 'untaken' when the consumer is back; taking it now could only
    // run it twice (it cannot be acked on a socket that is gone).
    const pending = it.next();
    const during = await Promise.race([pending.then((r) => r.value?.data.toString()), new Promise((r) => setTimeout(() => r('(nothing)'), 300))]);
    expect(during).toBe('(nothing)');

    server.refuseWith = undefined;
    await until(() => expect(t.connected).toBe(true));
    server.push('after');
    expect((await pending).value?.data.toString()).toBe('after');
  });
});
