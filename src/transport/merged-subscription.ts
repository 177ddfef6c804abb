import { AsyncQueue } from '../async/async-queue.js';
import { isPersistentTopic } from './topic-name.js';
import type { IncomingMessage, SubscribeOptions, Subscription } from './transport.js';

/**
 * Several consumers of one subscription read as one. For non-persistent topics only: each
 * part's messages are moved here as they arrive, with no flow control of their own (on such
 * a topic the consumer takes everything and bounds it itself; the broker would drop the rest).
 * stop() stops every part; what they received is still handed out.
 */
export class MergedSubscription implements Subscription {
  private readonly queue = new AsyncQueue<IncomingMessage>();
  private readonly pumps: Promise<void>;
  readonly redeliverable = false;

  constructor(private readonly parts: readonly Subscription[]) {
    if (parts.length === 0 || parts.some((part) => part.redeliverable)) throw new Error('MergedSubscription takes one or more non-persistent parts');
    this.pumps = Promise.all(parts.map((part) => this.pump(part))).then(() => this.queue.finish());
  }

  private async pump(part: Subscription): Promise<void> {
    for await (const m of part) this.queue.push(m);
  }

  get topic(): string {
    return this.parts[0]!.topic;
  }

  get subscription(): string {
    return this.parts[0]!.subscription;
  }

  [Symbol.asyncIterator](): AsyncIterator<IncomingMessage> {
    return {
      next: () => this.queue.next(),
      return: async () => {
        await this.stop();
        return { value: undefined, done: true };
      },
    };
  }

  async stop(): Promise<void> {
    await Promise.all(this.parts.map((part) => part.stop()));
    await this.pumps;
  }

  removeOnClose(): void {
    for (const p of this.parts) p.removeOnClose();
  }

  async close(): Promise<void> {
    await this.stop();
    await Promise.all(this.parts.map((part) => part.close()));
  }
}

/**
 * Whether several consumers may read a subscription as one: a Shared (or Key_Shared) one, which
 * deals its messages over its consumers (an Exclusive one refuses a second, a Failover one feeds
 * only one), to a non-persistent topic (a persistent one needs flow control a merge does not give).
 */
export function mergeable(options: SubscribeOptions): boolean {
  const type = options.type ?? 'Shared';
  return (type === 'Shared' || type === 'KeyShared') && !isPersistentTopic(options.topic);
}

/**
 * Open `count` parts side by side (each may be a handshake, and a reload waits for them all)
 * and read them as one. If one cannot be opened, those that were are closed and its error is
 * thrown.
 */
export async function openMerged(count: number, open: (part: number) => Promise<Subscription>): Promise<MergedSubscription> {
  const opened = await Promise.allSettled(Array.from({ length: count }, (_, part) => open(part)));
  const parts = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = opened.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    await Promise.allSettled(parts.map((part) => part.close()));
    throw failed.reason;
  }
  return new MergedSubscription(parts);
}
