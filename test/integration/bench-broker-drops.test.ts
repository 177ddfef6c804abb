/**
 * The bench's count of what a broker dropped on a non-persistent topic, against a real
 * broker: a consumer given no room loses messages, and what it gets once given room is what
 * the broker took in less what the count says it dropped.
 */
import pino from 'pino';
import WebSocket from 'ws';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { droppedAtBroker } from '../../bench/broker-drops.js';
import { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import type { Transport } from '../../src/transport/transport.js';
import { brokerTransport, suffix, waitUntil } from '../support/pulsar-app.js';

const adminUrl = inject('pulsarAdminUrl');
const admin = new PulsarAdminClient(adminUrl);
const log = pino({ level: 'silent' });
const open: { close(): unknown }[] = [];

afterAll(async () => {
  for (const o of open.reverse()) await o.close();
});

/**
 * A consumer on the WebSocket API in pull mode that asks for nothing until told: the broker
 * may hand its service-side consumer only `room` messages, and drops the rest.
 */
async function idleConsumer(topic: string, room: number): Promise<{ received: () => number; permit: (n: number) => void; close(): void }> {
  const path = topic.replace('://', '/');
  const url = `${adminUrl.replace(/^http/, 'ws')}/ws/v2/consumer/${path}/drops?subscriptionType=Exclusive&receiverQueueSize=${room}&pullMode=true`;
  const socket = new WebSocket(url);
  let received = 0;
  socket.on('message', () => received++);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    received: () => received,
    permit: (n) => socket.send(JSON.stringify({ type: 'permit', permitMessages: n })),
    close: () => socket.close(),
  };
}

describe('the bench reads what the broker dropped', () => {
  it('counts the messages a consumer with no room lost, and only those', async () => {
    const topic = `non-persistent://public/default/bench-drops-${suffix()}`;
    const consumer = await idleConsumer(topic, 5);
    open.push(consumer);
    const transport: Transport = await brokerTransport(adminUrl, log);
    open.push(transport);
    const producer = await transport.producer(topic);
    const sent = 100;
    for (let i = 0; i < sent; i++) await producer.send({ data: `m${i}` });
    await waitUntil(async () => (await admin.topicStats(topic))?.msgInCounter === sent, 10_000, 'the broker to count every publish');
    const dropped = await droppedAtBroker(admin, topic);
    expect(dropped).toBeGreaterThan(0);
    // Given room, the consumer gets what the broker kept for it and nothing more.
    consumer.permit(1_000);
    await waitUntil(() => consumer.received() >= sent - dropped!, 10_000, 'the kept messages to arrive');
    expect(consumer.received()).toBe(sent - dropped!);
  });

  it('says nothing of a persistent topic, which keeps what it cannot hand out', async () => {
    expect(await droppedAtBroker(admin, `persistent://public/default/bench-drops-${suffix()}`)).toBeUndefined();
  });
});
