import type { ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import type { BackoffOptions } from '../async/backoff.js';
import { BrokerTransport } from './broker-transport.js';
import { mergeable, openMerged } from './merged-subscription.js';
import { MAX_WS_RECEIVER_QUEUE, PulsarWsSubscription, type PulsarWsSubscriptionSettings, type SubscriptionAdmin } from './pulsar-ws-consumer.js';
import { webSocketBase } from './pulsar-ws-endpoint.js';
import { DroppedPublishes } from './dropped-publish.js';
import { OutageLog } from './outage-log.js';
import { PulsarWsProducer, type PulsarWsProducerSettings } from './pulsar-ws-producer.js';
import type { SubscribeOptions, Subscription } from './transport.js';
import type { TokenSource } from './token-source.js';

export interface PulsarWsTransportSettings {
  readonly kind: 'pulsar-ws';
  /** The broker's web port: `http(s)://host:8080` or `ws(s)://host:8080`. */
  readonly url: string;
  /** Where the bearer token comes from; asked at every (re)connect, so a rotated one is used. */
  readonly tokens?: TokenSource | undefined;
  /** TLS for `wss://` beyond Node's defaults (a private CA, a client certificate). */
  readonly tls?: ConnectionOptions | undefined;
  readonly log: Logger;
  /** Bound on opening a subscription or producer, retries included; default 15 000. */
  readonly connectTimeoutMs?: number;
  /** Bound on one HTTP upgrade; default 10 000. */
  readonly handshakeTimeoutMs?: number;
  /** Keepalive ping period; a ping unanswered by the next one drops the socket. Default 30 000 (the broker closes idle sockets after 5 min). */
  readonly pingIntervalMs?: number;
  /** A send not confirmed within this fails, time spent reconnecting included; default 30 000. */
  readonly sendTimeoutMs?: number;
  /** Unconfirmed sends in flight per producer; default 1000. */
  readonly maxPendingSends?: number;
  /**
   * The same for a producer to a non-persistent topic; default 500. The WebSocket service
   * carries every client's publishes on one connection to the broker, which drops a
   * non-persistent publish past `maxConcurrentNonPersistentMessagePerConnection` (1,000 by
   * default) in flight there and confirms it all the same; a drop is sent again.
   */
  readonly nonPersistentInFlight?: number;
  /** The broker's `webSocketMaxTextFrameSize`; default 1 048 576. */
  readonly maxFrameBytes?: number;
  /** How long close() lets outstanding sends finish; default 5000. */
  readonly closeTimeoutMs?: number;
  /** Reconnect delays; default 100 ms growing to 5 s, jittered (a broker back is found within 5 s). */
  readonly reconnect?: BackoffOptions;
  /**
   * The admin REST call behind `initialPosition: 'earliest'` on a persistent topic (the
   * composition root passes one on the same web port: assembly/create-transport.ts).
   * Without it such a subscribe fails; nothing else needs it.
   */
  readonly admin?: SubscriptionAdmin;
}

/**
 * The Transport over Pulsar's WebSocket API (built into the broker, pure JS). One socket
 * per subscription and one per topic producer. Semantics beyond the interface:
 * - Redelivery counts and dead-lettering work for Shared and KeyShared subscriptions (the
 *   default); for Exclusive and Failover the broker does not count redeliveries.
 * - `initialPosition: 'earliest'` on a persistent topic creates the subscription through the
 *   admin REST API first, because Pulsar 3.x's WebSocket consumer ignores the parameter.
 * - `receiverQueueSize` is capped at 1000 by the WebSocket service. On a non-persistent
 *   topic a larger one opens several consumers on a Shared subscription (1000 each), read as
 *   one: there the broker's room is what a burst may fill before it drops messages.
 * - `connected` is true while every open subscription and producer has its socket up (and
 *   at least one exists): it goes false during a reconnect.
 */
export class PulsarWsTransport extends BrokerTransport<PulsarWsSubscription, PulsarWsProducer> {
  readonly kind = 'pulsar-ws';
  private readonly subSettings: PulsarWsSubscriptionSettings;
  private readonly prodSettings: PulsarWsProducerSettings;

  constructor(settings: PulsarWsTransportSettings) {
    super(settings.log.child({ component: 'transport', transport: 'pulsar-ws' }));
    const common = {
      base: webSocketBase(settings.url),
      tokens: settings.tokens,
      tls: settings.tls,
      log: this.log,
      pingIntervalMs: settings.pingIntervalMs ?? 30_000,
      connectTimeoutMs: settings.connectTimeoutMs ?? 15_000,
      handshakeTimeoutMs: settings.handshakeTimeoutMs ?? 10_000,
      backoff: settings.reconnect ?? { maxDelayMs: 5_000 },
      outage: new OutageLog(this.log),
    };
    this.subSettings = { ...common, admin: settings.admin, onClosed: this.forget };
    this.prodSettings = {
      ...common,
      sendTimeoutMs: settings.sendTimeoutMs ?? 30_000,
      maxPendingSends: Math.max(1, settings.maxPendingSends ?? 1000),
      nonPersistentInFlight: Math.max(1, settings.nonPersistentInFlight ?? 500),
      onDropped: new DroppedPublishes(this.log).record,
      maxFrameBytes: settings.maxFrameBytes ?? 1_048_576,
      closeTimeoutMs: settings.closeTimeoutMs ?? 5_000,
    };
  }

  override async subscribe(options: SubscribeOptions, signal?: AbortSignal): Promise<Subscription> {
    const room = options.receiverQueueSize ?? MAX_WS_RECEIVER_QUEUE;
    // A subscription several consumers cannot read as one keeps the service's cap.
    if (room <= MAX_WS_RECEIVER_QUEUE || !mergeable(options)) return super.subscribe(options, signal);
    const count = Math.ceil(room / MAX_WS_RECEIVER_QUEUE);
    return openMerged(count, () => super.subscribe({ ...options, receiverQueueSize: Math.ceil(room / count) }, signal));
  }

  protected openSubscription(options: SubscribeOptions, signal: AbortSignal | undefined): Promise<PulsarWsSubscription> {
    return PulsarWsSubscription.open(options, this.subSettings, signal);
  }

  protected openProducer(topic: string, signal: AbortSignal | undefined): Promise<PulsarWsProducer> {
    return PulsarWsProducer.open(topic, this.prodSettings, signal);
  }
}
