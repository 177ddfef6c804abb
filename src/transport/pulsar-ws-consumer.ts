import type { Logger } from 'pino';
import { AsyncQueue } from '../async/async-queue.js';
import { PulsarWsConnection, type PulsarWsLinkSettings } from './pulsar-ws-connection.js';
import { endpointUrl } from './pulsar-ws-endpoint.js';
import { isPersistentTopic } from './topic-name.js';
import { defaultDeadLetterTopic, type IncomingMessage, type SubscribeOptions, type Subscription } from './transport.js';

/** The WebSocket service caps the receiver queue at 1000. */
export const MAX_WS_RECEIVER_QUEUE = 1000;

/**
 * Non-persistent topics: room is granted again in permits of a quarter of the queue, at most
 * this many messages. Never the whole queue: the room would run out before the permit arrives,
 * and the broker drops what the service's consumer has no room for.
 */
const MAX_PERMIT_BATCH = 250;

/**
 * The admin REST call the consumer needs, injected (the admin client sits above the
 * transports). Pulsar 3.x's WebSocket consumer ignores an initial position, so a persistent
 * subscription asked for at earliest is created over REST before its socket opens.
 */
export interface SubscriptionAdmin {
  createSubscriptionAtEarliest(topic: string, subscription: string, signal?: AbortSignal): Promise<'created' | 'exists'>;
}

export interface PulsarWsSubscriptionSettings extends PulsarWsLinkSettings {
  /** `ws(s)://host:port` */
  readonly base: string;
  /** Needed only to subscribe at earliest on a persistent topic. */
  readonly admin: SubscriptionAdmin | undefined;
  /** Called once when the subscription has detached for good. */
  readonly onClosed?: (sub: PulsarWsSubscription) => void;
}

/** What the broker pushes for each message. */
interface ConsumerFrame {
  readonly messageId?: unknown;
  readonly payload?: unknown;
  readonly properties?: Record<string, string>;
  readonly redeliveryCount?: number;
}

/** A class rather than an object of closures: one allocation per message on the hot path. */
class WsIncomingMessage implements IncomingMessage {
  constructor(
    /** True once acked or nacked; a non-persistent topic's messages are born settled. */
    public settled: boolean,
    readonly data: Buffer,
    readonly properties: Readonly<Record<string, string>>,
    readonly redeliveryCount: number,
    readonly messageId: string,
    readonly topic: string,
    /** The connection generation it arrived on; acks only make sense on that one. */
    readonly generation: number,
    private readonly owner: PulsarWsSubscription,
  ) {}

  /** The broker's id: here it is a string of the frame already. */
  get deliveryKey(): string {
    return this.messageId;
  }

  ack(): Promise<void> {
    this.owner.settle(this, true);
    return Promise.resolve();
  }

  nack(): Promise<void> {
    this.owner.settle(this, false);
    return Promise.resolve();
  }
}

/**
 * A subscription over Pulsar's WebSocket consumer endpoint, in push mode. Flow control is
 * the broker's: it pushes at most `receiverQueueSize` messages not yet acked or nacked, so
 * that is the bound on what sits here untaken (and the worker's concurrency should stay
 * below it, or intake stalls while every slot is held by work in progress).
 *
 * Reconnects: a message id means something only to the consumer that received it, and the
 * WebSocket service closes that consumer with the socket, so the broker redelivers whatever
 * was not acked. After a reconnect, acks and nacks of messages taken earlier send nothing
 * and resolve (they never throw into the worker); untaken messages of a persistent topic
 * from a socket that is gone are dropped here, during the outage as well as after it, since
 * their redelivered copies will follow. A non-persistent topic has no redelivery, so its
 * untaken messages are still handed out.
 *
 * stop(): iteration ends and pushes are no longer taken; the socket stays open while taken
 * messages are unsettled (they can still be acked), and closes when the last one is, which
 * hands everything it held back to the broker at once. Nacking held messages instead would
 * count a redelivery against messages nobody processed (and push them toward the DLQ).
 *
 * Non-persistent topics: the broker drops what the service's consumer has no room for, and
 * an ack there does nothing at the broker. So the socket is opened in the service's pull
 * mode and this side grants room in permits, topped up as messages arrive: a permit frame
 * per quarter of the queue instead of an ack frame per message (in push mode the service
 * frees a slot only on an ack). The room granted is the same `receiverQueueSize`, and this
 * subscription holds the burst (it bounds it). stop() still hands out what arrived.
 */
export class PulsarWsSubscription implements Subscription {
  private readonly queue = new AsyncQueue<WsIncomingMessage>();
  private readonly conn: PulsarWsConnection;
  private readonly persistent: boolean;
  private readonly log: Logger;
  private takenUnsettled = 0;
  /** Non-persistent (pull mode): the room granted at first, the batch it is granted again in, and messages arrived since. */
  private readonly permits: number;
  private readonly permitBatch: number;
  private unpermitted = 0;
  private stopped = false;
  private detaching: Promise<void> | undefined;
  private remove = false;

  private constructor(
    private readonly options: SubscribeOptions,
    private readonly settings: PulsarWsSubscriptionSettings,
  ) {
    this.persistent = isPersistentTopic(options.topic);
    this.log = settings.log.child({ topic: options.topic, subscription: options.subscription });
    const requested = options.receiverQueueSize ?? MAX_WS_RECEIVER_QUEUE;
    const queueSize = Math.max(1, Math.min(requested, MAX_WS_RECEIVER_QUEUE));
    if (queueSize !== requested) this.log.debug({ requested, queueSize }, 'receiverQueueSize clamped to what the WebSocket API allows');
    this.permits = queueSize;
    this.permitBatch = Math.max(1, Math.min(MAX_PERMIT_BATCH, Math.floor(queueSize / 4)));
    const type = options.type ?? 'Shared';
    const dl = options.deadLetter;
    const url = endpointUrl(settings.base, 'consumer', options.topic, options.subscription, {
      subscriptionType: type === 'KeyShared' ? 'Key_Shared' : type,
      receiverQueueSize: queueSize,
      negativeAckRedeliveryDelay: options.nackRedeliveryDelayMs,
      maxRedeliverCount: dl?.maxRedeliverCount,
      deadLetterTopic: dl ? (dl.topic ?? defaultDeadLetterTopic(options.topic, options.subscription)) : undefined,
      // Honoured by newer brokers; 3.x ignores it, hence the admin call in open().
      subscriptionInitialPosition: options.initialPosition === 'earliest' ? 'Earliest' : undefined,
      pullMode: this.persistent ? undefined : 'true',
    });
    this.conn = new PulsarWsConnection({
      ...settings,
      url,
      role: 'consumer',
      topic: options.topic,
      subscription: options.subscription,
      log: this.log,
      handlers: {
        onOpen: (generation) => this.onOpen(generation),
        onMessage: (text) => this.onMessage(text),
        onDown: () => this.onDown(),
      },
    });
  }

  static async open(options: SubscribeOptions, settings: PulsarWsSubscriptionSettings, signal?: AbortSignal): Promise<PulsarWsSubscription> {
    const sub = new PulsarWsSubscription(options, settings);
    // Nothing runs before conn.open(), so a failed admin call leaves nothing to close.
    if (options.initialPosition === 'earliest' && sub.persistent) {
      if (!settings.admin)
        throw new Error(`pulsar-ws: subscribing ${options.subscription} at earliest needs the admin client (PulsarWsTransportSettings.admin)`);
      const r = await settings.admin.createSubscriptionAtEarliest(options.topic, options.subscription, signal);
      sub.log.debug({ result: r }, 'subscription at earliest');
    }
    await sub.conn.open(signal);
    return sub;
  }

  get topic(): string {
    return this.options.topic;
  }

  get subscription(): string {
    return this.options.subscription;
  }

  get redeliverable(): boolean {
    return this.persistent;
  }

  /** True while the socket is open. */
  get isConnected(): boolean {
    return this.conn.isOpen;
  }

  [Symbol.asyncIterator](): AsyncIterator<IncomingMessage> {
    return {
      next: () => this.next(),
      return: async () => {
        await this.stop();
        return { value: undefined, done: true };
      },
    };
  }

  private async next(): Promise<IteratorResult<IncomingMessage>> {
    for (;;) {
      const r = await this.queue.next();
      if (r.done) return { value: undefined, done: true };
      const m = r.value;
      const current = m.generation === this.conn.generation;
      // Its socket is gone (already replaced, or down and not yet reconnected): it can no
      // longer be acked, and the broker redelivers it.
      if (this.persistent && !(current && this.conn.isOpen)) continue;
      if (current && !m.settled) this.takenUnsettled++;
      return { value: m, done: false };
    }
  }

  /** @internal called by WsIncomingMessage; settling twice is a no-op. */
  settle(message: WsIncomingMessage, ack: boolean): void {
    if (message.settled) return;
    message.settled = true;
    if (message.generation !== this.conn.generation) {
      this.log.debug({ messageId: message.messageId, ack }, 'settled a message from an earlier connection: nothing sent, the broker redelivers it');
      return;
    }
    this.takenUnsettled--;
    const id = JSON.stringify(message.messageId);
    const frame = ack ? `{"messageId":${id}}` : `{"type":"negativeAcknowledge","messageId":${id}}`;
    if (!this.conn.send(frame)) this.log.debug({ messageId: message.messageId, ack }, 'socket down: settle not sent, the broker redelivers it');
    if (this.stopped && this.takenUnsettled === 0) void this.detach();
  }

  private onOpen(generation: number): void {
    // A new socket is a new consumer at the service, with no room granted yet.
    if (!this.persistent) {
      this.unpermitted = 0;
      this.conn.send(`{"type":"permit","permitMessages":${this.permits}}`);
    }
    if (generation > 1) {
      // Whatever was taken on the old socket is the broker's to redeliver now.
      this.takenUnsettled = 0;
      this.log.debug({ generation }, 'pulsar-ws consumer resubscribed; unacked messages from before are redelivered');
    }
  }

  private onDown(): void {
    // A stopped subscription has nothing to gain from a new socket.
    if (this.stopped) void this.detach();
  }

  private onMessage(text: string): void {
    // After stop() pushes are left unacked: they go back to the broker with the socket.
    if (this.stopped) return;
    let f: ConsumerFrame;
    try {
      f = JSON.parse(text) as ConsumerFrame;
    } catch (err) {
      this.log.warn({ err, frameBytes: text.length }, 'pulsar-ws consumer got a frame that is not JSON');
      return;
    }
    if (typeof f.messageId !== 'string' || typeof f.payload !== 'string') {
      this.log.warn({ keys: Object.keys(f) }, 'pulsar-ws consumer ignored a frame without messageId/payload');
      return;
    }
    const data = Buffer.from(f.payload, 'base64');
    // Non-persistent: grant the room this message took back, a batch at a time (see the class comment).
    const released = !this.persistent;
    if (released && ++this.unpermitted >= this.permitBatch) {
      this.conn.send(`{"type":"permit","permitMessages":${this.unpermitted}}`);
      this.unpermitted = 0;
    }
    this.queue.push(
      new WsIncomingMessage(released, data, f.properties ?? {}, f.redeliveryCount ?? 0, f.messageId, this.options.topic, this.conn.generation, this),
    );
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.persistent) this.queue.end();
    else this.queue.finish();
    if (this.takenUnsettled === 0 || !this.conn.isOpen) await this.detach();
  }

  async close(): Promise<void> {
    await this.stop();
    await this.detach();
  }

  removeOnClose(): void {
    this.remove = true;
  }

  private detach(): Promise<void> {
    this.detaching ??= (() => {
      // The broker's handler unsubscribes synchronously, before it reads the close frame after it.
      if ((this.options.unsubscribeOnClose || this.remove) && this.conn.isOpen) this.conn.send('{"type":"unsubscribe"}');
      return this.conn.close().then(() => this.settings.onClosed?.(this));
    })();
    return this.detaching;
  }
}
