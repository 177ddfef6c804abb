import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PulsarWsTransport } from '../../../src/transport/pulsar-ws-transport.js';
import { captureLogger } from '../../support/harness.js';
import { FakePulsarWs } from '../../fakes/fake-pulsar-ws.js';

const log = pino({ level: 'silent' });
const until = (fn: () => void): Promise<void> => vi.waitFor(fn, { timeout: 5_000, interval: 10 });

// The fake endpoint and the transport of the test running now, closed after each.
let fake: FakePulsarWs | undefined;
let transport: PulsarWsTransport | undefined;

afterEach(async () => {
  await transport?.close();
  await fake?.stop();
  transport = undefined;
  fake = undefined;
});

describe('pulsar-ws subscription while its broker is away (local fake endpoint)', () => {
  it('does not hand out a persistent message pushed on the lost socket, even before a reconnect', async () => {
    const server = (fake = await FakePulsarWs.start());
    const t = (transport = new PulsarWsTransport({
      kind: 'pulsar-ws',
      url: server.url,
      log,
      connectTimeoutMs: 2_000,
      reconnect: { initialDelayMs: 10, maxDelayMs: 50 },
    }));
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

describe('pulsar-ws transport logging an outage (local fake endpoint)', () => {
  it('logs the loss once and the recovery once, for all its sockets and however many retries', async () => {
    const server = (fake = await FakePulsarWs.start());
    const { log, lines } = captureLogger('info');
    const t = (transport = new PulsarWsTransport({
      kind: 'pulsar-ws',
      url: server.url,
      log,
      connectTimeoutMs: 2_000,
      reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
    }));
    await t.subscribe({ topic: 'persistent://public/default/outage-a', subscription: 's' });
    await t.subscribe({ topic: 'non-persistent://public/default/outage-b', subscription: 's' });
    await t.producer('persistent://public/default/outage-c');
    await until(() => expect(server.openSockets).toBe(3));

    // The broker goes away and refuses every reconnect for a while: many attempts per socket.
    server.refuseWith = { status: 503 };
    server.dropAll();
    await until(() => expect(server.refused).toBeGreaterThanOrEqual(15));
    server.refuseWith = undefined;
    await until(() => expect(t.connected).toBe(true));
    await until(() => expect(lines().filter((l) => l.includes('broker connection recovered'))).toHaveLength(1));

    const said = lines().map((l) => JSON.parse(l) as { msg: string; level: number; links?: number; reconnected?: number });
    expect(said.filter((l) => l.msg === 'broker connection lost; reconnecting')).toHaveLength(1);
    const recovered = said.filter((l) => l.msg === 'broker connection recovered');
    expect(recovered).toMatchObject([{ links: 3, reconnected: 3 }]);
    // Nothing else at info or above: no line per socket, none per retry.
    expect(said.map((l) => l.msg).sort()).toEqual(['broker connection lost; reconnecting', 'broker connection recovered']);
  });

  it('does not call a closed socket an outage', async () => {
    const server = (fake = await FakePulsarWs.start());
    const { log, lines } = captureLogger('info');
    const t = (transport = new PulsarWsTransport({
      kind: 'pulsar-ws',
      url: server.url,
      log,
      connectTimeoutMs: 2_000,
      reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
    }));
    const sub = await t.subscribe({ topic: 'persistent://public/default/closing', subscription: 's' });
    await sub.close();
    await t.close();
    expect(lines()).toEqual([]);
  });
});
