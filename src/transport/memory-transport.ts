import { AsyncQueue } from '../async/async-queue.js';
import { Fifo } from '../async/fifo.js';
import {
  defaultDeadLetterTopic,
  toBuffer,
  type IncomingMessage,
  type OutgoingMessage,
  type Producer,
  type SubscribeOptions,
  type Subscription,
  type Transport,
} from './transport.js';
import { TransportError } from '../errors.js';

/**
 * An in-process broker with Pulsar's delivery semantics where the worker depends on them:
 * named subscriptions shared by their consumers, a bounded per-consumer queue, nack with a
 * redelivery delay, a dead-letter topic, and redelivery of what a closing consumer held.
 * Non-persistent topics behave as on a broker: a message goes only to a consumer with room
 * in its receiver queue at that moment (otherwise it is dropped), and nothing is ever
 * redelivered. It is the embedded default and the reference for the transport contract suite.
 */
interface StoredMessage {
  readonly data: Buffer;
  readonly properties: Readonly<Record<string, string>>;
  readonly messageId: string;
  redeliveryCount: number;
}

const DEFAULT_RECEIVER_QUEUE = 1000;

class MemorySubscriptionState {
  readonly consumers: MemoryConsumer[] = [];
  /** A Fifo, not an array: Array.shift copies a large array, and a burst made the pump quadratic. */
  private readonly backlog = new Fifo<StoredMessage>();
  private next = 0;

  constructor(
    readonly topic: TopicState,
    readonly name: string,
    readonly options: SubscribeOptions,
  ) {}

  enqueue(msg: StoredMessage, front = false): void {
    if (front) this.backlog.unshift(msg);
    else this.backlog.push(msg);
    this.pump();
    // Nothing is stored for a non-persistent topic: what no consumer had room for is gone.
    if (!this.topic.persistent && this.backlog.size > 0) this.backlog.clear();
  }

  /** Hand backlog to consumers with room, round robin (failover/exclusive: the first only). */
  pump(): void {
    const shared = this.options.type === undefined || this.options.type === 'Shared' || this.options.type === 'KeyShared';
    while (this.backlog.size > 0 && this.consumers.length > 0) {
      const candidates = shared ? this.consumers.length : 1;
      let target: MemoryConsumer | undefined;
      for (let i = 0; i < candidates; i++) {
        const c = this.consumers[(this.next + i) % this.consumers.length]!;
        if (c.hasRoom()) {
          target = c;
          this.next = (this.next + i + 1) % this.consumers.length;
          break;
        }
      }
      if (!target) return;
      target.deliver(this.backlog.shift()!);
    }
  }
}

class TopicState {
  readonly subscriptions = new Map<string, MemorySubscriptionState>();
  readonly persistent: boolean;
  constructor(readonly name: string) {
    this.persistent = !name.startsWith('non-persistent://');
  }
}

class MemoryConsumer implements Subscription {
  private readonly queue = new AsyncQueue<StoredMessage>();
  private readonly unacked = new Set<StoredMessage>();
  /** Nacked messages waiting out their delay. */
  private readonly timers = new Map<NodeJS.Timeout, StoredMessage>();
  private readonly queueSize: number;
  private stopped = false;
  private closed = false;
  private remove = false;

  constructor(
    private readonly transport: MemoryTransport,
    private readonly state: MemorySubscriptionState,
  ) {
    this.queueSize = state.options.receiverQueueSize ?? DEFAULT_RECEIVER_QUEUE;
  }

  get topic(): string {
    return this.state.topic.name;
  }

  get subscription(): string {
    return this.state.name;
  }

  get redeliverable(): boolean {
    return this.state.topic.persistent;
  }

  hasRoom(): boolean {
    return !this.stopped && this.queue.size < this.queueSize;
  }

  deliver(msg: StoredMessage): void {
    this.unacked.add(msg);
    this.queue.push(msg);
  }

  [Symbol.asyncIterator](): AsyncIterator<IncomingMessage> {
    return {
      next: async () => {
        const r = await this.queue.next();
        if (r.done) return { value: undefined, done: true };
        this.state.pump();
        return { value: this.wrap(r.value), done: false };
      },
      return: async () => {
        await this.stop();
        return { value: undefined, done: true };
      },
    };
  }

  private wrap(msg: StoredMessage): IncomingMessage {
    let settled = false;
    const settle = (): boolean => {
      if (settled || !this.unacked.has(msg)) return false;
      settled = true;
      this.unacked.delete(msg);
      return true;
    };
    return {
      data: msg.data,
      properties: msg.properties,
      redeliveryCount: msg.redeliveryCount,
      messageId: msg.messageId,
      deliveryKey: msg.messageId,
      topic: this.topic,
      ack: async () => {
        settle();
        this.state.pump();
      },
      nack: async () => {
        if (!settle()) return;
        if (!this.redeliverable) return; // a non-persistent topic has nothing to redeliver from
        const delay = this.state.options.nackRedeliveryDelayMs ?? 60_000;
        const t = setTimeout(() => {
          this.timers.delete(t);
          this.transport.redeliver(this.state, msg);
        }, delay);
        t.unref();
        this.timers.set(t, msg);
      },
    };
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (!this.redeliverable) {
      // Received messages exist nowhere else: iteration still hands them out.
      this.queue.finish();
      return;
    }
    const rest = this.queue.end();
    // Held but never taken: back to the subscription for another consumer.
    for (const m of rest.reverse()) {
      this.unacked.delete(m);
      this.state.enqueue(m, true);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.stop();
    this.closed = true;
    const idx = this.state.consumers.indexOf(this);
    if (idx >= 0) this.state.consumers.splice(idx, 1);
    for (const t of this.timers.keys()) clearTimeout(t);
    // Pending nacks and taken-but-unsettled messages return, counted as redelivered.
    const back = [...this.unacked, ...this.timers.values()];
    this.unacked.clear();
    this.timers.clear();
    this.transport.detach(this, this.state, back, this.remove);
  }

  removeOnClose(): void {
    this.remove = true;
  }
}

export class MemoryTransport implements Transport {
  readonly kind = 'memory';
  private readonly topics = new Map<string, TopicState>();
  private readonly producers = new Map<string, Producer>();
  private readonly consumers = new Set<MemoryConsumer>();
  private seq = 0;
  private closed = false;

  get connected(): boolean {
    return !this.closed;
  }

  private topic(name: string): TopicState {
    let t = this.topics.get(name);
    if (!t) {
      t = new TopicState(name);
      this.topics.set(name, t);
    }
    return t;
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.assertOpen();
    const topic = this.topic(options.topic);
    let state = topic.subscriptions.get(options.subscription);
    if (!state) {
      state = new MemorySubscriptionState(topic, options.subscription, options);
      topic.subscriptions.set(options.subscription, state);
    } else if (state.options.type === 'Exclusive' && state.consumers.length > 0) {
      throw new TransportError(`subscription ${options.subscription} on ${options.topic} is exclusive and already has a consumer`, { retriable: false });
    }
    const consumer = new MemoryConsumer(this, state);
    state.consumers.push(consumer);
    this.consumers.add(consumer);
    state.pump();
    return consumer;
  }

  async producer(topic: string): Promise<Producer> {
    this.assertOpen();
    let p = this.producers.get(topic);
    if (!p) {
      p = {
        topic,
        send: async (message: OutgoingMessage) => {
          this.assertOpen();
          this.publish(topic, message);
        },
      };
      this.producers.set(topic, p);
    }
    return p;
  }

  private publish(topicName: string, message: OutgoingMessage): void {
    const topic = this.topics.get(topicName);
    if (!topic) return; // nobody has ever subscribed: dropped, as on a broker without retention
    const data = toBuffer(message.data);
    const properties = message.properties ?? {};
    for (const state of topic.subscriptions.values()) {
      state.enqueue({ data, properties, messageId: `${++this.seq}`, redeliveryCount: 0 });
    }
  }

  /** @internal a nacked message whose delay has passed */
  redeliver(state: MemorySubscriptionState, msg: StoredMessage): void {
    const dl = state.options.deadLetter;
    if (dl && msg.redeliveryCount >= dl.maxRedeliverCount) {
      this.publish(dl.topic ?? defaultDeadLetterTopic(state.topic.name, state.name), { data: msg.data, properties: msg.properties });
      return;
    }
    msg.redeliveryCount++;
    state.enqueue(msg);
  }

  /** Subscriptions that exist on a topic (one unsubscribed on close leaves with its last consumer). */
  subscriptionNames(topic: string): string[] {
    return [...(this.topics.get(topic)?.subscriptions.keys() ?? [])];
  }

  /** @internal a consumer left holding these messages */
  detach(consumer: MemoryConsumer, state: MemorySubscriptionState, held: StoredMessage[], remove: boolean): void {
    this.consumers.delete(consumer);
    for (const m of held) m.redeliveryCount++;
    // As on a broker, an unsubscribe while others share the subscription is refused.
    if (state.consumers.length === 0 && (!state.topic.persistent || state.options.unsubscribeOnClose || remove)) {
      // A non-persistent subscription, or one unsubscribed on close, ends with its last consumer.
      state.topic.subscriptions.delete(state.name);
      return;
    }
    if (!state.topic.persistent) return;
    for (const m of held) state.enqueue(m);
  }

  private assertOpen(): void {
    if (this.closed) throw new TransportError('transport is closed', { retriable: false });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    for (const c of this.consumers) await c.close();
    this.closed = true;
    this.consumers.clear();
    this.producers.clear();
  }
}
