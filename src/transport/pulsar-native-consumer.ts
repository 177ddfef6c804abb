import type { Logger } from 'pino';
import { abortable } from '../async/abortable.js';
import { AsyncQueue } from '../async/async-queue.js';
import { Backoff } from '../async/backoff.js';
import { sleep } from '../async/sleep.js';
import { isPersistentTopic } from './topic-name.js';
import { ReceivePace } from './receive-pace.js';
import type { NativeClient, NativeConsumer, NativeMessage } from './pulsar-native-client.js';
import { defaultDeadLetterTopic, type IncomingMessage, type SubscribeOptions, type Subscription } from './transport.js';

export interface PulsarNativeSubscriptionSettings {
  readonly log: Logger;
  readonly onClosed?: (sub: PulsarNativeSubscription) => void;
}

/**
 * Messages pulled from the C++ client but not yet taken before the pump pulls more. Kept at
 * one: the client's own receiver queue (`receiverQueueSize`) is the prefetch, and a message
 * still inside it can go to another consumer when this one closes. A batch may add up to
 * BATCH_MAX beyond it.
 */
const LOCAL_BUFFER = 1;

/**
 * What one batch fetch takes at most. Batches, because each call into pulsar-client costs a
 * libuv handle; large, so that a burst leaves the client's queue before the broker drops what
 * finds no room on a non-persistent topic (docs/benchmarks-rationale.md).
 */
export const BATCH_MAX = 1_000;

/**
 * A batch fetch that finds fewer than BATCH_MAX waiting answers with what it has after this
 * (libpulsar counts it in whole milliseconds: 1 to 2 ms). Short, because while a subscription
 * is busy every message it takes waits for its batch (receive-pace.ts).
 */
export const BATCH_WAIT_MS = 1;

class NativeIncomingMessage implements IncomingMessage {
  settled = false;
  readonly data: Buffer;
  readonly properties: Readonly<Record<string, string>>;
  readonly redeliveryCount: number;
  private id: string | undefined;

  constructor(
    readonly native: NativeMessage,
    readonly topic: string,
    private readonly owner: PulsarNativeSubscription,
  ) {
    // Read once: each getter crosses into the native binding. A non-persistent topic
    // redelivers nothing, so its count is always 0 and not read.
    this.data = native.getData();
    this.properties = native.getProperties();
    this.redeliveryCount = owner.redeliverable ? native.getRedeliveryCount() : 0;
  }

  /**
   * Read when asked: getMessageId() makes one more native object, and each of those costs the
   * garbage collector a finalizer. Only a persistent topic's worker (to know a redelivered
   * answer) and a few log lines ask.
   */
  get messageId(): string {
    return (this.id ??= this.native.getMessageId().toString());
  }

  /**
   * See IncomingMessage.deliveryKey: one number across the binding. The producer's name beside
   * it took as long again to read, and two strings a request (docs/benchmarks-rationale.md).
   */
  get deliveryKey(): number {
    return this.native.getPublishTimestamp();
  }

  ack(): Promise<void> {
    return this.owner.settle(this, true);
  }

  nack(): Promise<void> {
    return this.owner.settle(this, false);
  }
}

/**
 * A subscription through the native client. A loop pulls (see pump()) only while the local
 * buffer has room, so an idle `for await` leaves messages in the client's receiver queue.
 * The C++ client reconnects by itself and message ids stay valid across its reconnects.
 * stop() behaves as in the WebSocket transport: iteration ends, the consumer stays open while
 * taken messages are unsettled, then closes, which returns what it held. On a non-persistent
 * topic the client's receiver queue is the broker's room: a message is taken off it as soon as
 * the local buffer has room, and stop() hands out what was received and closes the consumer
 * at once, taken messages settled or not (there is nothing to acknowledge there).
 */
export class PulsarNativeSubscription implements Subscription {
  private readonly queue = new AsyncQueue<NativeIncomingMessage>();
  private readonly log: Logger;
  /** See Subscription.redeliverable: false on a non-persistent topic. */
  readonly redeliverable: boolean;
  private takenUnsettled = 0;
  private stopped = false;
  private detached = false;
  private detaching: Promise<void> | undefined;
  /** The pump, waiting for the taker to make room. */
  private waiting: (() => void) | undefined;
  private pumping: Promise<void> = Promise.resolve();
  /** Single receives or batches, by how fast messages come. */
  private readonly pace = new ReceivePace();
  /** The batch fetch under way, if any: it settles within BATCH_WAIT_MS. */
  private fetching: Promise<NativeMessage[]> | undefined;
  private remove = false;
  /** Ends the pump's pause after a failed receive: stop() must not wait it out. */
  private readonly stopping = new AbortController();

  private constructor(
    private readonly consumer: NativeConsumer,
    private readonly options: SubscribeOptions,
    private readonly settings: PulsarNativeSubscriptionSettings,
  ) {
    this.log = settings.log.child({ topic: options.topic, subscription: options.subscription });
    this.redeliverable = isPersistentTopic(options.topic);
  }

  static async open(
    client: NativeClient,
    options: SubscribeOptions,
    settings: PulsarNativeSubscriptionSettings,
    signal?: AbortSignal,
  ): Promise<PulsarNativeSubscription> {
    const dl = options.deadLetter;
    const subscribing = client.subscribe({
      topic: options.topic,
      subscription: options.subscription,
      subscriptionType: options.type ?? 'Shared',
      subscriptionInitialPosition: options.initialPosition === 'earliest' ? 'Earliest' : 'Latest',
      ...(options.receiverQueueSize !== undefined ? { receiverQueueSize: options.receiverQueueSize } : {}),
      ...(options.nackRedeliveryDelayMs !== undefined ? { nAckRedeliverTimeoutMs: options.nackRedeliveryDelayMs } : {}),
      batchReceivePolicy: { maxNumMessages: BATCH_MAX, maxNumBytes: 64 * 2 ** 20, timeoutMs: BATCH_WAIT_MS },
      ...(dl
        ? {
            deadLetterPolicy: {
              deadLetterTopic: dl.topic ?? defaultDeadLetterTopic(options.topic, options.subscription),
              maxRedeliverCount: dl.maxRedeliverCount,
            },
          }
        : {}),
    });
    const consumer = await abortable(subscribing, signal, `subscribing to ${options.topic}`, (late) => void late.close());
    const sub = new PulsarNativeSubscription(consumer, options, settings);
    sub.pumping = sub.pump();
    return sub;
  }

  get topic(): string {
    return this.options.topic;
  }

  get subscription(): string {
    return this.options.subscription;
  }

  get isConnected(): boolean {
    return !this.detached && this.consumer.isConnected();
  }

  [Symbol.asyncIterator](): AsyncIterator<IncomingMessage> {
    return {
      next: async () => {
        const r = await this.queue.next();
        if (r.done) return { value: undefined, done: true };
        this.takenUnsettled++;
        this.wake();
        return { value: r.value, done: false };
      },
      return: async () => {
        await this.stop();
        return { value: undefined, done: true };
      },
    };
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  /** Resolves once the taker has left room for more (or the subscription stopped). */
  private async room(): Promise<void> {
    while (!this.stopped && this.queue.size >= LOCAL_BUFFER) await new Promise<void>((resolve) => (this.waiting = resolve));
  }

  /**
   * One fetch at a time, so batches keep the order messages came in and an ordered
   * (Exclusive, Failover) subscription may take them too: a receive() while messages come
   * one by one, so a lone message waits for nothing; batches while they come fast, each a
   * single promise for what the client holds (ReceivePace).
   */
  private async pump(): Promise<void> {
    const backoff = new Backoff({ initialDelayMs: 100, maxDelayMs: 5_000 });
    let batch = false;
    while (!this.stopped) {
      await this.room();
      if (this.stopped) return;
      let got: NativeMessage[];
      try {
        // No timeout on receive(): pulsar-client runs receive(timeout) as a worker that holds one
        // of libuv's four threadpool threads until a message or the timeout, so four idle
        // subscriptions starved every fs call and DNS lookup of the process. receive() alone is
        // the C++ client's receiveAsync, which holds no thread; closing the consumer ends it.
        if (batch) {
          this.fetching = this.consumer.batchReceive();
          got = await this.fetching;
        } else got = [await this.consumer.receive()];
        backoff.reset();
      } catch (err) {
        if (this.stopped) return;
        const delayMs = backoff.next();
        this.log.warn({ err, delayMs }, 'pulsar receive failed; retrying');
        await sleep(delayMs, this.stopping.signal).catch(() => undefined);
        continue;
      } finally {
        this.fetching = undefined;
      }
      // Received after stop() on a persistent topic: left unacked, it returns to the broker when
      // the consumer closes. On a non-persistent one it exists nowhere else: it is handed out
      // while the queue still takes messages (stop() drains before it finishes the queue).
      if (this.stopped && this.redeliverable) return;
      for (const msg of got) this.queue.push(new NativeIncomingMessage(msg, this.options.topic, this));
      batch = this.pace.next(got.length);
    }
  }

  /** @internal Settle failures are logged, not thrown: the broker redelivers what stays unacked. */
  async settle(message: NativeIncomingMessage, ack: boolean): Promise<void> {
    if (message.settled) return;
    message.settled = true;
    this.takenUnsettled--;
    if (this.detached) {
      this.log.debug({ messageId: message.messageId, ack }, 'settled after the consumer closed: the broker redelivers it');
      return;
    }
    try {
      // A non-persistent subscription keeps nothing to acknowledge (the broker's ack there does
      // nothing; permits follow receipt), and each acknowledge() costs pulsar-client a promise
      // settled through a libuv handle of its own.
      if (ack) {
        if (this.redeliverable) await this.consumer.acknowledge(message.native);
      } else this.consumer.negativeAcknowledge(message.native);
    } catch (err) {
      this.log.warn({ err, messageId: message.messageId, ack }, 'pulsar settle failed; the broker will redeliver the message');
    }
    if (this.stopped && this.takenUnsettled === 0) void this.detach();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wake();
    this.stopping.abort();
    if (this.redeliverable) {
      this.queue.end();
    } else {
      // A batch under way settles within BATCH_WAIT_MS; what it took is handed out.
      await this.fetching?.catch(() => undefined);
      await this.drainReceived();
      // Nothing is acknowledged here, and what the broker sent this consumer from now on would
      // be lost: close at once, so the subscription's other consumers get it. The close ends
      // the pump's receive; a message that receive got first is still handed out.
      await this.detach();
      await this.pumping;
      this.queue.finish();
    }
    if (this.takenUnsettled === 0) await this.detach();
  }

  /**
   * A non-persistent topic's messages already in the client's receiver queue exist nowhere
   * else: take them all before the queue finishes. receive(1) holds a threadpool thread for a
   * millisecond at most (TimeOut when the queue is empty); not receive(0), which pulsar-client
   * turns into a receive that waits for ever.
   */
  private async drainReceived(): Promise<void> {
    for (;;) {
      let msg: NativeMessage;
      try {
        msg = await this.consumer.receive(1);
      } catch {
        return;
      }
      this.queue.push(new NativeIncomingMessage(msg, this.options.topic, this));
    }
  }

  async close(): Promise<void> {
    await this.stop();
    await this.detach();
    await this.pumping;
  }

  removeOnClose(): void {
    this.remove = true;
  }

  /** The broker refuses while other consumers share the subscription: then this one just leaves. */
  private async unsubscribe(): Promise<void> {
    try {
      await this.consumer.unsubscribe();
    } catch (err) {
      this.log.info({ err, topic: this.topic }, 'subscription still shared; leaving it to the others');
      await this.consumer.close();
    }
  }

  private detach(): Promise<void> {
    this.detaching ??= (async () => {
      this.detached = true;
      try {
        if (this.options.unsubscribeOnClose || this.remove) await this.unsubscribe();
        else await this.consumer.close();
      } catch (err) {
        this.log.warn({ err }, 'pulsar consumer close failed');
      }
      this.settings.onClosed?.(this);
    })();
    return this.detaching;
  }
}
