import { describe, expect, it } from 'vitest';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { mergeable, MergedSubscription, openMerged } from '../../../src/transport/merged-subscription.js';
import type { Subscription } from '../../../src/transport/transport.js';

const TOPIC = 'non-persistent://tg/request/merged';

describe('MergedSubscription', () => {
  it('reads every part as one and, once stopped, still hands out what the parts received', async () => {
    const transport = new MemoryTransport();
    const parts = [
      await transport.subscribe({ topic: TOPIC, subscription: 's', receiverQueueSize: 2 }),
      await transport.subscribe({ topic: TOPIC, subscription: 's', receiverQueueSize: 2 }),
    ];
    const merged = new MergedSubscription(parts);
    const producer = await transport.producer(TOPIC);
    // 4 fits the two parts' room together, not either part alone.
    for (let i = 0; i < 4; i++) await producer.send({ data: `m${i}` });
    await new Promise((r) => setImmediate(r));
    await merged.stop();
    const got: string[] = [];
    for await (const m of merged) got.push(m.data.toString());
    expect(got.sort()).toEqual(['m0', 'm1', 'm2', 'm3']);
    expect(merged.redeliverable).toBe(false);
    await merged.close();
    await transport.close();
  });

  it('refuses parts of a topic the broker redelivers: they need flow control it does not give', async () => {
    const transport = new MemoryTransport();
    const part = await transport.subscribe({ topic: 'persistent://tg/flow/merged', subscription: 's' });
    expect(() => new MergedSubscription([part])).toThrow(/non-persistent/);
    await transport.close();
  });
});

describe('openMerged', () => {
  it('opens every part, numbered, and reads them as one', async () => {
    const transport = new MemoryTransport();
    const asked: number[] = [];
    const merged = await openMerged(3, (part) => {
      asked.push(part);
      return transport.subscribe({ topic: TOPIC, subscription: 's' });
    });
    expect(asked).toEqual([0, 1, 2]);
    const producer = await transport.producer(TOPIC);
    for (let i = 0; i < 3; i++) await producer.send({ data: `m${i}` });
    const it = merged[Symbol.asyncIterator]();
    const got = [];
    for (let i = 0; i < 3; i++) got.push((await it.next()).value!.data.toString());
    expect(got.sort()).toEqual(['m0', 'm1', 'm2']);
    await merged.close();
    await transport.close();
  });

  it('closes the parts it opened when one cannot be opened, and throws that one error', async () => {
    const transport = new MemoryTransport();
    const opened: Subscription[] = [];
    const closed: Subscription[] = [];
    const failure = new Error('handshake refused');
    await expect(
      openMerged(3, async (part) => {
        if (part === 1) throw failure;
        const sub = await transport.subscribe({ topic: TOPIC, subscription: 's' });
        const close = sub.close.bind(sub);
        sub.close = () => {
          closed.push(sub);
          return close();
        };
        opened.push(sub);
        return sub;
      }),
    ).rejects.toBe(failure);
    expect(opened).toHaveLength(2);
    expect(closed).toEqual(opened);
    await transport.close();
  });
});

describe('mergeable', () => {
  it('is true only for a Shared or Key_Shared subscription to a non-persistent topic', () => {
    const np = 'non-persistent://tg/request/x';
    expect(mergeable({ topic: np, subscription: 's' })).toBe(true);
    expect(mergeable({ topic: np, subscription: 's', type: 'KeyShared' })).toBe(true);
    expect(mergeable({ topic: np, subscription: 's', type: 'Exclusive' })).toBe(false);
    expect(mergeable({ topic: np, subscription: 's', type: 'Failover' })).toBe(false);
    expect(mergeable({ topic: 'persistent://tg/flow/x', subscription: 's' })).toBe(false);
  });
});
