import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { decodeResponse } from '../src/envelope/response.js';
import { TimeoutError } from '../src/errors.js';
import type { Producer, Subscription, Transport } from '../src/transport/transport.js';
import { benchRequestBody } from './request-payload.js';

/** How often a probe asks while nothing answers: the resolution of a start time. */
const PROBE_INTERVAL_MS = 20;

/**
 * An agent that asks one service again and again until it answers: how a start time is
 * read (a process spawned, a descriptor added), from outside, as an agent would see it.
 * Opened before the clock starts, so that its own subscription is not counted.
 */
export class AnswerProbe {
  private readonly sent = new Set<string>();
  private answeredAt: number | undefined;
  private onAnswer: (() => void) | undefined;
  private readonly routing: Promise<void>;

  private constructor(
    private readonly subscription: Subscription,
    private readonly producer: Producer,
    private readonly expected: string,
  ) {
    this.routing = this.route();
  }

  static async open(transport: Transport, requestTopic: string, responseTopic: string, signal?: AbortSignal): Promise<AnswerProbe> {
    const subscription = await transport.subscribe(
      { topic: responseTopic, subscription: `bench-probe-${randomUUID()}`, type: 'Exclusive', unsubscribeOnClose: true },
      signal,
    );
    try {
      const producer = await transport.producer(requestTopic, signal);
      return new AnswerProbe(subscription, producer, benchRequestBody({ argumentBytes: 64, chunks: 0 }).expectedResponse);
    } catch (err) {
      await subscription.close();
      throw err;
    }
  }

  /** performance.now() when the first right answer to one of its requests arrived; asks every 20 ms until then. */
  async answered(timeoutMs: number, signal?: AbortSignal): Promise<number> {
    const deadline = performance.now() + timeoutMs;
    const { body } = benchRequestBody({ argumentBytes: 64, chunks: 0 });
    const answer = new Promise<void>((resolve) => (this.onAnswer = resolve));
    while (this.answeredAt === undefined) {
      signal?.throwIfAborted();
      if (performance.now() > deadline) throw new TimeoutError(`no answer on ${this.producer.topic} within ${timeoutMs} ms (${this.sent.size} probes)`);
      const id = randomUUID();
      this.sent.add(id);
      // Not awaited: a send to a topic nobody reads yet must not hold the next probe back.
      this.producer.send({ data: body, properties: { id } }).catch(() => undefined);
      await Promise.race([answer, delay(PROBE_INTERVAL_MS, undefined, { signal })]);
    }
    return this.answeredAt;
  }

  async close(): Promise<void> {
    await this.subscription.stop();
    await this.routing;
    // The producer is the transport's, cached per topic: it closes with the transport.
    await this.subscription.close();
  }

  private isRightAnswer(data: Buffer): boolean {
    try {
      const response = decodeResponse(data);
      return response.error === null && response.response === this.expected;
    } catch {
      return false;
    }
  }

  private async route(): Promise<void> {
    for await (const msg of this.subscription) {
      const id = msg.properties['id'];
      await msg.ack();
      if (id === undefined || !this.sent.has(id) || this.answeredAt !== undefined) continue;
      if (!this.isRightAnswer(msg.data)) continue;
      this.answeredAt = performance.now();
      this.onAnswer?.();
    }
  }
}
