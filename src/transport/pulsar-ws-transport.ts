import type { Logger } from 'pino';
import { ConfigError, TransportError } from '../errors.js';
import type { BackoffOptions } from './backoff.js';
import { PulsarWsSubscription, type PulsarWsSubscriptionSettings } from './pulsar-ws-consumer.js';
import { webSocketBase } from './pulsar-ws-endpoint.js';
import { PulsarWsProducer, type PulsarWsProducerSettings } from './pulsar-ws-producer.js';
import { parseTopic } from './topic-name.js';
import type { Producer, SubscribeOptions, Subscription, Transport } from './transport.js';

export interface PulsarWsTransportSettings {
  readonly kind: 'pulsar-ws';
  /** The broker's web port: `http(s)://host:8080` or `ws(s)://host:8080`. */
  readonly url: string;
  /** JWT for token authentication (sent as the `token` query parameter). */
  readonly token?: string;
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
  /** The broker's `webSocketMaxTextFrameSize`; default 1 048 576. */
  readonly maxFrameBytes?: number;
  /** How long close() lets outstanding sends finish; default 5000. */
  readonly closeTimeoutMs?: number;
  /** Reconnect delays; default 100 ms growing to 10 s, jittered. */
  readonly reconnect?: BackoffOptions;
}

/**
 * The Transport over Pulsar's WebSocket API (built into the broker, pure JS). One socket
 * per subscription and one per topic producer. Semantics beyond the interface:
 * - Redelivery counts and dead-lettering work for Shared and KeyShared subscriptions (the
 *   default); for Exclusive and Failover the broker does not count redeliveries.
 * - `initialPosition: 'earliest'` on a persistent topic creates the subscription through the
 *   admin REST API first, because Pulsar 3.x's WebSocket consumer ignores the parameter.
 * - `receiverQueueSize` is capped at 1000 by the WebSocket service.
 * - `connected` is true while every open subscription and producer has its socket up (and
 *   at least one exists): it goes false during a reconnect.
 */
export class PulsarWsTransport implements Transport {
  readonly kind = 'pulsar-ws';
  private readonly log: Logger;
  private readonly subSettings: PulsarWsSubscriptionSettings;
  private readonly prodSettings: PulsarWsProducerSettings;
  private readonly producers = new Map<string, Promise<PulsarWsProducer>>();
  private readonly openProducers = new Set<PulsarWsProducer>();
  private readonly subscriptions = new Set<PulsarWsSubscription>();
  private closing: Promise<void> | undefined;

  constructor(settings: PulsarWsTransportSettings) {
    const base = webSocketBase(settings.url);
    this.log = settings.log.child({ component: 'transport', transport: 'pulsar-ws' });
    const common = {
      base,
      token: settings.token,
      log: this.log,
      pingIntervalMs: settings.pingIntervalMs ?? 30_000,
      connectTimeoutMs: settings.connectTimeoutMs ?? 15_000,
      handshakeTimeoutMs: settings.handshakeTimeoutMs ?? 10_000,
      backoff: settings.reconnect ?? {},
    };
    this.subSettings = { ...common, onClosed: (s) => this.subscriptions.delete(s) };
    this.prodSettings = {
      ...common,
      sendTimeoutMs: settings.sendTimeoutMs ?? 30_000,
      maxPendingSends: Math.max(1, settings.maxPendingSends ?? 1000),
      maxFrameBytes: settings.maxFrameBytes ?? 1_048_576,
      closeTimeoutMs: settings.closeTimeoutMs ?? 5_000,
    };
  }

  get connected(): boolean {
    if (this.closing) return false;
    let any = false;
    for (const s of this.subscriptions) {
      if (!s.isOpen) return false;
      any = true;
    }
    for (const p of this.openProducers) {
      if (!p.isOpen) return false;
      any = true;
    }
    return any;
  }

  async subscribe(options: SubscribeOptions, signal?: AbortSignal): Promise<Subscription> {
    this.assertOpen();
    const sub = await PulsarWsSubscription.open({ ...options, topic: canonicalTopic(options.topic) }, this.subSettings, signal);
    if (this.closing) {
      await sub.close();
      this.assertOpen();
    }
    this.subscriptions.add(sub);
    return sub;
  }

  /** Cached per topic; concurrent first calls share one open (and the first caller's signal). */
  producer(topic: string, signal?: AbortSignal): Promise<Producer> {
    try {
      this.assertOpen();
      topic = canonicalTopic(topic);
    } catch (err) {
      return Promise.reject(err);
    }
    let p = this.producers.get(topic);
    if (p === undefined) {
      p = PulsarWsProducer.open(topic, this.prodSettings, signal).then(
        async (producer) => {
          if (this.closing) {
            await producer.close();
            this.assertOpen();
          }
          this.openProducers.add(producer);
          return producer;
        },
        (err: unknown) => {
          this.producers.delete(topic);
          throw err;
        },
      );
      this.producers.set(topic, p);
    }
    return p;
  }

  /** Close every subscription, then every producer (letting outstanding sends finish). Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    const steps: Promise<void>[] = [];
    for (const s of this.subscriptions) steps.push(s.close());
    for (const p of this.producers.values()) steps.push(p.then((producer) => producer.close(), () => undefined));
    const results = await Promise.allSettled(steps);
    for (const r of results) if (r.status === 'rejected') this.log.warn({ err: r.reason }, 'pulsar-ws close step failed');
    this.subscriptions.clear();
    this.producers.clear();
    this.openProducers.clear();
  }

  private assertOpen(): void {
    if (this.closing) throw new TransportError('pulsar-ws transport is closed', { retriable: false });
  }
}

/** Full topic name from either form; a malformed one is a settings problem. */
function canonicalTopic(topic: string): string {
  const t = parseTopic(topic);
  if ('error' in t) throw new ConfigError([t.error]);
  return t.full;
}
