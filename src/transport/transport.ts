/**
 * The transport boundary. The worker, the agent-side client and the benchmark see only
 * these types; in-memory, Pulsar native and Pulsar WebSocket implement them.
 */
import type { TransportKind } from './transport-kind.js';

/** A message received on a subscription. Settle it exactly once with ack or nack. */
export interface IncomingMessage {
  readonly data: Buffer;
  readonly properties: Readonly<Record<string, string>>;
  /** How many times the broker has delivered this message before. */
  readonly redeliveryCount: number;
  /** Opaque broker id, for logs. */
  readonly messageId: string;
  /**
   * The same on every delivery of one message, to tell a redelivered copy from a new request;
   * the worker pairs it with the request's `id`. The broker's id where reading it costs nothing
   * more (WebSocket, memory). On the native client reading the id makes a native object per
   * request for the collector to finalize (docs/benchmarks-rationale.md), so there it is the
   * publish time, a number: the messages of one batch share it, and so can those of several
   * producers within a millisecond; hence the pairing, which tells them apart unless two carry
   * the same request id in the same millisecond (then they are one request's copies to the worker).
   */
  readonly deliveryKey: string | number;
  readonly topic: string;
  ack(): Promise<void>;
  /** Ask for redelivery after the subscription's negative-ack delay. */
  nack(): Promise<void>;
}

export interface OutgoingMessage {
  /** A string is sent as its UTF-8 bytes. */
  readonly data: Buffer | string;
  readonly properties?: Readonly<Record<string, string>>;
}

export const SubscriptionType = {
  Shared: 'Shared',
  Exclusive: 'Exclusive',
  Failover: 'Failover',
  KeyShared: 'KeyShared',
} as const;
export type SubscriptionType = (typeof SubscriptionType)[keyof typeof SubscriptionType];

export interface DeadLetterPolicy {
  /** Where a message goes after too many redeliveries; default `<topic>-<subscription>-DLQ`. */
  readonly topic?: string;
  readonly maxRedeliverCount: number;
}

export interface SubscribeOptions {
  /** Full topic name, e.g. `persistent://tg/request/joke`. */
  readonly topic: string;
  readonly subscription: string;
  /** Default Shared. */
  readonly type?: SubscriptionType;
  /** Where a new subscription starts; default latest. */
  readonly initialPosition?: 'latest' | 'earliest';
  /** Bound on messages held client-side and not yet taken (backpressure). */
  readonly receiverQueueSize?: number;
  /** Delay before a negatively acknowledged message comes back. */
  readonly nackRedeliveryDelayMs?: number;
  readonly deadLetter?: DeadLetterPolicy;
  /**
   * Remove the subscription from the broker when this consumer closes, so that an agent's
   * private response subscription leaves no backlog behind. While open it stays durable: a
   * reconnect or a broker restart loses none of its messages. Default false.
   */
  readonly unsubscribeOnClose?: boolean;
}

/**
 * Delivered messages, taken one at a time with `for await`. Taking is the flow control:
 * a slow loop leaves messages with the broker.
 */
export interface Subscription extends AsyncIterable<IncomingMessage> {
  readonly topic: string;
  readonly subscription: string;
  /**
   * False on a non-persistent topic: the broker keeps nothing, so a nack, a closed consumer
   * or a message left untaken can never bring a message back. Such a subscription takes
   * messages off the broker as they come (the broker drops what a consumer has no room
   * for), its ack and nack change nothing, and stop() still hands out what it already
   * received: whoever consumes it must answer everything it was given.
   */
  readonly redeliverable: boolean;
  /**
   * Stop intake: iteration ends, messages held but not yet taken are released for
   * redelivery. Messages already taken can still be acked or nacked until close().
   */
  stop(): Promise<void>;
  /** Stop, then detach from the broker. Unsettled messages return to the subscription. */
  close(): Promise<void>;
  /**
   * Decided late what `unsubscribeOnClose` decides early: when this consumer detaches, remove
   * the subscription from the broker (a service dropped from the catalog leaves no backlog).
   * The broker refuses while other consumers share it; the last one to leave removes it.
   */
  removeOnClose(): void;
}

export interface Producer {
  readonly topic: string;
  /** Resolves once the broker has accepted the message. */
  send(message: OutgoingMessage, signal?: AbortSignal): Promise<void>;
}

/** What a process runs on: `auto` only chooses one of these. */
export type RunningTransportKind = Exclude<TransportKind, 'auto'>;

export interface Transport {
  readonly kind: RunningTransportKind;
  subscribe(options: SubscribeOptions, signal?: AbortSignal): Promise<Subscription>;
  /** One producer per topic, cached: calling twice returns the same one. */
  producer(topic: string, signal?: AbortSignal): Promise<Producer>;
  /** True while the transport can reach its broker (always true in memory). */
  readonly connected: boolean;
  /** Close every subscription and producer. Idempotent. */
  close(): Promise<void>;
}

export function defaultDeadLetterTopic(topic: string, subscription: string): string {
  return `${topic}-${subscription}-DLQ`;
}

export function toBuffer(data: Buffer | string): Buffer {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}
