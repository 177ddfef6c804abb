/**
 * A subscription on a non-persistent topic that is stopped (a worker draining, a service
 * retired by a reload) while a message it handed out is still being handled. The broker keeps
 * nothing for it, so whatever it is sent after stop() is lost unless it stops taking at once:
 * the other consumers of the subscription must get the rest.
 */
import pino from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Subscription, Transport } from '../../src/transport/transport.js';
import { brokerTransport, suffix, topicSubscriptions, waitUntil } from '../support/pulsar-app.js';

const adminUrl = inject('pulsarAdminUrl');
const log = pino({ level: 'silent' });
const open: { close(): unknown }[] = [];

afterAll(async () => {
  for (const o of open.reverse()) await o.close();
});

/** The consumers of `subscription` as the broker counts them, with the room each has granted. */
async function consumers(topic: string, subscription: string): Promise<{ availablePermits?: number }[]> {
  return ((await topicSubscriptions(adminUrl, topic))[subscription]?.consumers ?? []) as { availablePermits?: number }[];
}

/**
 * Until the broker shows `count` consumers of `subscription`, each with room. A pull-mode
 * consumer (pulsar-ws on a non-persistent topic) grants its first room after it subscribed,
 * and a non-persistent message that finds none is dropped: the test would wait for it for ever.
 */
async function untilRoom(topic: string, subscription: string, count: number): Promise<void> {
  await waitUntil(
    async () => {
      const now = await consumers(topic, subscription);
      return now.length === count && now.every((c) => (c.availablePermits ?? 0) > 0);
    },
    15_000,
    `${count} consumer(s) of ${subscription} with room at the broker`,
  );
}

describe('a stopped subscription on a non-persistent topic', () => {
  it('takes nothing more while a message it handed out is unsettled: the next go to the other consumer', async () => {
    const topic = `non-persistent://public/default/np-stop-${suffix()}`;
    const transport: Transport = await brokerTransport(adminUrl, log);
    open.push(transport);
    const producer = await transport.producer(topic);
    const first: Subscription = await transport.subscribe({ topic, subscription: 'workers', type: 'Shared' });
    await untilRoom(topic, 'workers', 1);
    await producer.send({ data: 'held' });
    const taken = await first[Symbol.asyncIterator]().next();
    expect(taken.done).toBe(false);
    await first.stop();
    const left = (await consumers(topic, 'workers')).length;

    const second: Subscription = await transport.subscribe({ topic, subscription: 'workers', type: 'Shared' });
    await untilRoom(topic, 'workers', left + 1);
    const got: string[] = [];
    const reading = (async () => {
      for await (const m of second) {
        got.push(m.data.toString());
        await m.ack();
      }
    })();
    const sent = 40;
    for (let i = 0; i < sent; i++) await producer.send({ data: `m${i}` });
    await waitUntil(() => got.length >= sent, 15_000, `the second consumer to get all ${sent} (it has ${got.length})`);
    expect(got).toEqual(Array.from({ length: sent }, (_, i) => `m${i}`));

    // The held message is settled late, with nothing left to acknowledge it to.
    await taken.value!.ack();
    await first.close();
    await second.close();
    await reading;
  });
});
