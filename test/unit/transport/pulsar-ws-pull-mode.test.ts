import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { IncomingMessage } from '../../../src/transport/transport.js';
import { fakeWsSetup, type FakePulsarWs } from '../../fakes/fake-pulsar-ws.js';

const log = pino({ level: 'silent' });
const NP_TOPIC = 'non-persistent://public/default/pull';
const TOPIC = 'persistent://public/default/pull';
const until = (fn: () => void): Promise<void> => vi.waitFor(fn, { timeout: 5_000, interval: 10 });

async function take(it: AsyncIterator<IncomingMessage>, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    if (r.done) throw new Error('subscription ended');
    out.push(r.value.data.toString());
  }
  return out;
}

// The frames a client sends a consumer socket: permits and acks, by kind.
function consumerFrames(server: FakePulsarWs, conn?: number): Record<string, unknown>[] {
  return server.received.filter((r) => r.path.includes('/consumer/') && (conn === undefined || r.conn === conn)).map((r) => r.frame);
}

describe('pulsar-ws non-persistent subscriptions in pull mode (local fake endpoint)', () => {
  const setup = fakeWsSetup(log);
  const start = setup.start;
  afterEach(() => setup.stop());

  it('opens in pull mode, grants its queue in a permit, and grants room again in batches instead of acking each message', async () => {
    const [server, t] = await start();
    const sub = await t.subscribe({ topic: NP_TOPIC, subscription: 's', receiverQueueSize: 1000 });
    await until(() => expect(consumerFrames(server)).toEqual([{ type: 'permit', permitMessages: 1000 }]));
    expect(server.connections[0]).toContain('pullMode=true');
    const it = sub[Symbol.asyncIterator]();
    for (let i = 0; i < 600; i++) server.push(`m${i}`);
    const got = await take(it, 600);
    expect(got[599]).toBe('m599');
    // 600 arrived: two batches of 250 granted again, the last 100 not yet.
    await until(() =>
      expect(consumerFrames(server)).toEqual([
        { type: 'permit', permitMessages: 1000 },
        { type: 'permit', permitMessages: 250 },
        { type: 'permit', permitMessages: 250 },
      ]),
    );
    await sub.close();
  });

  it('grants a small queue again after each message, and grants the whole queue again on a new socket', async () => {
    const [server, t] = await start();
    const sub = await t.subscribe({ topic: NP_TOPIC, subscription: 's', receiverQueueSize: 1 });
    await until(() => expect(consumerFrames(server)).toEqual([{ type: 'permit', permitMessages: 1 }]));
    const it = sub[Symbol.asyncIterator]();
    server.push('one');
    expect(await take(it, 1)).toEqual(['one']);
    await until(() => expect(consumerFrames(server)).toHaveLength(2));
    server.dropAll();
    await until(() => expect(server.connections).toHaveLength(2));
    await until(() => expect(consumerFrames(server, 2)).toEqual([{ type: 'permit', permitMessages: 1 }]));
    await sub.close();
  });

  it('keeps push mode and per-message acks on a persistent topic', async () => {
    const [server, t] = await start();
    const sub = await t.subscribe({ topic: TOPIC, subscription: 's', receiverQueueSize: 10 });
    const it = sub[Symbol.asyncIterator]();
    await until(() => expect(server.openSockets).toBe(1));
    expect(server.connections[0]).not.toContain('pullMode');
    const id = server.push('kept');
    const r = await it.next();
    if (r.done) throw new Error('subscription ended');
    await r.value.ack();
    await until(() => expect(consumerFrames(server)).toEqual([{ messageId: id }]));
    await sub.close();
  });
});
