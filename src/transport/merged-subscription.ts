import { AsyncQueue } from '../async/async-queue.js';
import type { IncomingMessage, Subscription } from './transport.js';

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
