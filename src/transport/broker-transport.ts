import type { Logger } from 'pino';
import { ConfigError, TransportError } from '../errors.js';
import { parseTopic } from './topic-name.js';
import type { Producer, RunningTransportKind, SubscribeOptions, Subscription, Transport } from './transport.js';

/** What the shared lifecycle needs of an open subscription or producer. */
export interface BrokerLink {
  /** True while its connection to the broker is up. */
  readonly isConnected: boolean;
  close(): Promise<void>;
}

/**
 * The part of a broker transport that does not depend on the client library: topics made
 * canonical, one producer per topic opened once and shared, `connected` over every link,
 * and a close that refuses new links and settles the ones still opening. Subclasses say how
 * a subscription and a producer are opened, and what else close() must release.
 */
export abstract class BrokerTransport<S extends Subscription & BrokerLink, P extends Producer & BrokerLink> implements Transport {
  abstract readonly kind: RunningTransportKind;
  private readonly producers = new Map<string, Promise<P>>();
  private readonly openProducers = new Set<P>();
  private readonly subscriptions = new Set<S>();
  private closing: Promise<void> | undefined;

  /** A subscription calls this once it has detached for good (stop() then its last settle). */
  protected readonly forget = (sub: S): void => {
    this.subscriptions.delete(sub);
  };

  protected constructor(protected readonly log: Logger) {}

  /**
   * `options.topic` is canonical. `connection` numbers the broker connection to open it on,
   * for a transport that keeps more than one (0, the default, is its first).
   */
  protected abstract openSubscription(options: SubscribeOptions, signal: AbortSignal | undefined, connection: number): Promise<S>;
  /** `topic` is canonical. */
  protected abstract openProducer(topic: string, signal: AbortSignal | undefined): Promise<P>;
  /** After every link is closed: release the client itself. */
  protected async closeClient(): Promise<void> {}

  /**
   * True until close() while every open subscription and producer is connected. A transport
   * with nothing open is connected: a worker whose catalog has no service yet (a fleet that
   * gets its descriptors from live config) is ready to serve what comes, and /readyz says so.
   */
  get connected(): boolean {
    if (this.closing) return false;
    for (const link of [this.subscriptions, this.openProducers]) {
      for (const l of link) if (!l.isConnected) return false;
    }
    return true;
  }

  subscribe(options: SubscribeOptions, signal?: AbortSignal): Promise<Subscription> {
    return this.subscribeOver(options, signal, 0);
  }

  /** Open a subscription on broker connection `connection` (see openSubscription), kept until close(). */
  protected async subscribeOver(options: SubscribeOptions, signal: AbortSignal | undefined, connection: number): Promise<S> {
    this.assertOpen();
    const sub = await this.openSubscription({ ...options, topic: canonicalTopic(options.topic) }, signal, connection);
    await this.keep(sub);
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
      p = this.openProducer(topic, signal).then(
        async (producer) => {
          await this.keep(producer);
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

  /** Close every subscription, then every producer (letting outstanding sends finish), then the client. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    const steps: Promise<void>[] = [];
    for (const s of this.subscriptions) steps.push(s.close());
    for (const p of this.producers.values())
      steps.push(
        p.then(
          (producer) => producer.close(),
          () => undefined,
        ),
      );
    for (const r of await Promise.allSettled(steps)) if (r.status === 'rejected') this.log.warn({ err: r.reason }, `${this.kind} close step failed`);
    try {
      await this.closeClient();
    } catch (err) {
      this.log.warn({ err }, `${this.kind} client close failed`);
    }
    this.subscriptions.clear();
    this.producers.clear();
    this.openProducers.clear();
  }

  /** A link that finished opening after close() began is closed at once, and its caller told. */
  private async keep(link: BrokerLink): Promise<void> {
    if (!this.closing) return;
    await link.close();
    this.assertOpen();
  }

  private assertOpen(): void {
    if (this.closing) throw new TransportError(`${this.kind} transport is closed`, { retriable: false });
  }
}

/** Full topic name from either form; a malformed one is a settings problem. */
function canonicalTopic(topic: string): string {
  const t = parseTopic(topic);
  if ('error' in t) throw new ConfigError([t.error]);
  return t.full;
}
