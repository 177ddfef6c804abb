import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import { ConfigError, ToolwireError, TransportError, errorMessage } from '../errors.js';
import { abortable } from '../async/abortable.js';
import {
  loadPulsarClient,
  type ModuleImporter,
  type NativeClient,
  type NativeClientConfig,
  type NativeMessageId,
  type NativeProducer,
} from './pulsar-native-client.js';
import { PulsarNativeSubscription } from './pulsar-native-consumer.js';
import { BrokerTransport } from './broker-transport.js';
import { Backoff } from '../async/backoff.js';
import { sleep } from '../async/sleep.js';
import { isPersistentTopic } from './topic-name.js';
import { DROP_RETRY, DroppedPublishes, droppedTooOften, isDroppedNativeReceipt } from './dropped-publish.js';
import { mergeable, openMerged } from './merged-subscription.js';
import { onSlowAllocator } from './native-allocator.js';
import { NativeLog } from './native-log.js';
import type { BrokerTls } from './broker-tls.js';
import { NOT_AUTHENTICATED, notAuthorized, type BrokerOperation } from './broker-refusal.js';
import type { TokenSource } from './token-source.js';
import { toBuffer, type OutgoingMessage, type Producer, type SubscribeOptions, type Subscription } from './transport.js';

export interface PulsarNativeTransportSettings {
  readonly kind: 'pulsar';
  /** `pulsar://host:6650` or `pulsar+ssl://host:6651`. */
  readonly serviceUrl: string;
  /** Asked by libpulsar at each connect and at the broker's auth challenge (a token that expired). */
  readonly tokens?: TokenSource | undefined;
  /** The certificate settings, as paths: libpulsar reads the files itself. */
  readonly tls?: BrokerTls | undefined;
  readonly log: Logger;
  /** libpulsar's bound on lookups, producer and consumer creation; default 30. */
  readonly operationTimeoutSeconds?: number;
  /** A send not confirmed within this fails; default 30 000. */
  readonly sendTimeoutMs?: number;
  /** How long a batch may wait for more messages; default 1 (latency matters more than batch size here). */
  readonly batchingMaxPublishDelayMs?: number;
  /** Messages in one batch at most, 2 or more (libpulsar throws on 1); default libpulsar's 1,000. */
  readonly batchingMaxMessages?: number;
  /** Pending sends per producer before send() waits for room; default 10 000. */
  readonly maxPendingMessages?: number;
  /**
   * Sends to non-persistent topics in flight at once, over all of this client's producers;
   * default 500. They share one connection to the broker, which drops a non-persistent publish
   * that finds more than `maxConcurrentNonPersistentMessagePerConnection` (1,000 by default)
   * of its connection's in flight, and confirms it all the same.
   */
  readonly nonPersistentInFlight?: number;
  /**
   * Broker connections a Shared subscription to a non-persistent topic with a receiver queue
   * above 1,000 (the worker's request topics: 10,000 by default) is spread over, one consumer
   * on each, its queue split between them; default 2. The broker drops a non-persistent
   * message for a consumer whose connection cannot take more at that moment, however much
   * room its queue has: one connection lost part of a burst that two take whole
   * (docs/benchmarks-rationale.md). Each connection past the first is a client of its own,
   * shared by every such subscription.
   */
  readonly nonPersistentConnections?: number;
  /** For tests: how `pulsar-client` is imported. */
  readonly importer?: ModuleImporter;
  /** For tests: this process's memory map, read to tell which allocator it runs on. */
  readonly readMemoryMap?: () => Promise<string>;
}

/** libpulsar's TLS settings: it reads the files itself and checks hostnames only when told. */
function nativeTls(tls: BrokerTls | undefined): Partial<NativeClientConfig> {
  if (tls === undefined) return {};
  return {
    ...(tls.trustCertsFile !== undefined ? { tlsTrustCertsFilePath: tls.trustCertsFile } : {}),
    ...(tls.certFile !== undefined ? { tlsCertificateFilePath: tls.certFile } : {}),
    ...(tls.keyFile !== undefined ? { tlsPrivateKeyFilePath: tls.keyFile } : {}),
    tlsValidateHostname: tls.validateHostname,
    tlsAllowInsecureConnection: tls.allowInsecure,
  };
}

/** Receiver queues up to this size (libpulsar's default) keep one connection (nonPersistentConnections). */
const SPREAD_ABOVE = 1000;

/** What a producer of a non-persistent topic shares with the client's others. */
interface NonPersistentSends {
  /** The client's window of non-persistent sends in flight. */
  readonly window: LimitFunction;
  /** Told of each publish the broker dropped and that is sent again. */
  readonly onDropped: (topic: string, attempt: number) => void;
  /** A dropped publish is sent again until this long after its first drop. */
  readonly sendTimeoutMs: number;
}

class NativeProducerHandle implements Producer {
  private closed = false;
  private closing: Promise<void> | undefined;
  private flushQueued = false;
  /** Sends handed to libpulsar and not yet confirmed. */
  private pending = 0;
  /** Non-persistent topics: the client's shared window, and where a dropped publish is told. */
  private readonly nonPersistent: NonPersistentSends | undefined;

  private readonly settled = (): void => {
    this.pending--;
  };

  private readonly flushTurn = (): void => {
    this.flushQueued = false;
    // A failed flush fails the sends it carried, and they reject on their own.
    this.native.flush().catch(() => undefined);
  };

  constructor(
    readonly topic: string,
    private readonly native: NativeProducer,
    nonPersistent?: NonPersistentSends,
  ) {
    this.nonPersistent = nonPersistent;
  }

  get isConnected(): boolean {
    return !this.closed && this.native.isConnected();
  }

  /** Refuse new sends, flush what libpulsar holds, close. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      await this.native.flush();
      await this.native.close();
    })();
    return this.closing;
  }

  async send(message: OutgoingMessage, signal?: AbortSignal): Promise<void> {
    if (this.closed) throw new TransportError(`pulsar: producer for ${this.topic} is closed`, { retriable: false });
    const np = this.nonPersistent;
    if (!np) {
      await this.sendOnce(message, signal);
      return;
    }
    // Abort stops the wait for a place; a send already handed over runs its course.
    return abortable(
      np.window(() => this.sendUntilKept(message, np, signal)),
      signal,
      `send to ${this.topic}`,
    );
  }

  /**
   * A non-persistent publish the broker dropped reached nobody: sent again, after a pause
   * that lets the connection's backlog drain, until the send timeout has passed.
   */
  private async sendUntilKept(message: OutgoingMessage, np: NonPersistentSends, signal: AbortSignal | undefined): Promise<void> {
    const backoff = new Backoff({ initialDelayMs: DROP_RETRY.initialDelayMs, maxDelayMs: DROP_RETRY.maxDelayMs });
    // Counted from the first drop, a round trip after the send: a send that is kept reads no clock.
    let deadline: number | undefined;
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      if (!isDroppedNativeReceipt(await this.sendOnce(message, signal))) return;
      np.onDropped(this.topic, attempt);
      deadline ??= Date.now() + np.sendTimeoutMs;
      const delayMs = backoff.next();
      if (Date.now() + delayMs >= deadline) throw droppedTooOften('pulsar', this.topic, attempt, np.sendTimeoutMs);
      await sleep(delayMs, signal);
    }
  }

  private async sendOnce(message: OutgoingMessage, signal: AbortSignal | undefined): Promise<NativeMessageId> {
    const sending = this.native.send({ data: toBuffer(message.data), ...(message.properties ? { properties: message.properties } : {}) });
    // libpulsar's batch timer gives the throughput under load; a send that finds nothing else
    // in flight leaves at the end of this turn instead of waiting the timer out
    // (docs/benchmarks-rationale.md).
    if (this.pending === 0 && !this.flushQueued) {
      this.flushQueued = true;
      setImmediate(this.flushTurn);
    }
    this.pending++;
    sending.then(this.settled, this.settled);
    try {
      // Abort stops the wait only: a message handed to libpulsar may still be published.
      return await abortable(sending, signal, `send to ${this.topic}`);
    } catch (err) {
      throw wrap(err, `pulsar: send to ${this.topic} failed`);
    }
  }
}

/**
 * The Transport over the official native client (npm `pulsar-client`, a binding to the C++
 * libpulsar), loaded only when this transport is created. Producers batch (pipelined sends
 * go out together); with batching a Shared subscription hands a whole batch to one
 * consumer, which matters only when one producer sends bursts to a multi-replica worker.
 */
export class PulsarNativeTransport extends BrokerTransport<PulsarNativeSubscription, NativeProducerHandle> {
  readonly kind = 'pulsar';

  /** Non-persistent sends in flight, over all producers: they share the broker connection. */
  private readonly nonPersistentWindow: LimitFunction;

  /** Publishes the broker dropped and that are sent again. */
  private readonly dropped: DroppedPublishes;

  /** Clients past the first, for non-persistent subscriptions (nonPersistentConnections); made when first needed. */
  private readonly more: NativeClient[] = [];

  private constructor(
    private readonly client: NativeClient,
    private readonly settings: PulsarNativeTransportSettings,
    log: Logger,
    private readonly newClient: () => NativeClient,
    private readonly nativeLog: NativeLog,
  ) {
    super(log);
    this.nonPersistentWindow = pLimit(settings.nonPersistentInFlight ?? 500);
    this.dropped = new DroppedPublishes(this.log);
  }

  /** Throws ConfigError naming `pulsar-ws` when `pulsar-client` is not installed or does not load. */
  static async create(settings: PulsarNativeTransportSettings): Promise<PulsarNativeTransport> {
    const max = settings.batchingMaxMessages;
    // libpulsar throws on its own thread for less, which ends the process.
    if (max !== undefined && !(Number.isInteger(max) && max >= 2))
      throw new ConfigError([`transport "pulsar": batchingMaxMessages must be a whole number of 2 or more, got ${max}`]);
    const connections = settings.nonPersistentConnections;
    if (connections !== undefined && !(Number.isInteger(connections) && connections >= 1))
      throw new ConfigError([`transport "pulsar": nonPersistentConnections must be a whole number of 1 or more, got ${connections}`]);
    const mod = await loadPulsarClient(settings.importer);
    const log = settings.log.child({ component: 'transport', transport: 'pulsar' });
    if (await onSlowAllocator(settings.readMemoryMap))
      log.info(
        { preload: 'LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 (Debian: libjemalloc2)', docs: 'docs/pulsar.md' },
        "the native client runs on glibc's malloc; with jemalloc preloaded a worker served about 1.2x the requests a second",
      );
    const nativeLog = new NativeLog(log);
    const source = settings.tokens;
    // A rejection must not reach libpulsar's thread: an empty token is refused by the broker
    // like a wrong one, and the reason is logged here.
    const tokens =
      source &&
      ((): Promise<string> =>
        source.token().catch((err: unknown) => {
          log.warn({ err: errorMessage(err), from: source.description }, 'cannot get the broker token; this connect goes without');
          return '';
        }));
    const newClient = (): NativeClient =>
      new mod.Client({
        serviceUrl: settings.serviceUrl,
        operationTimeoutSeconds: settings.operationTimeoutSeconds ?? 30,
        ...(tokens ? { authentication: new mod.AuthenticationToken({ token: tokens }) } : {}),
        ...nativeTls(settings.tls),
        log: nativeLog.relay,
      });
    let client: NativeClient;
    try {
      client = newClient();
    } catch (err) {
      throw new ConfigError([`transport "pulsar": cannot create a client for ${settings.serviceUrl}: ${errorMessage(err)}`], { cause: err });
    }
    return new PulsarNativeTransport(client, settings, log, newClient, nativeLog);
  }

  override subscribe(options: SubscribeOptions, signal?: AbortSignal): Promise<Subscription> {
    const room = options.receiverQueueSize ?? SPREAD_ABOVE;
    // A queue of libpulsar's default size or less is not there for bursts: it stays on one
    // connection, and so keeps the order it was published in.
    const connections = Math.min(this.settings.nonPersistentConnections ?? 2, Math.ceil(room / SPREAD_ABOVE));
    if (connections <= 1 || !mergeable(options)) return super.subscribe(options, signal);
    return openMerged(connections, (part) => this.subscribeOver({ ...options, receiverQueueSize: Math.ceil(room / connections) }, signal, part));
  }

  protected async openSubscription(options: SubscribeOptions, signal: AbortSignal | undefined, connection: number): Promise<PulsarNativeSubscription> {
    try {
      return await PulsarNativeSubscription.open(this.clientFor(connection), options, { log: this.log, onClosed: this.forget }, signal);
    } catch (err) {
      throw wrap(err, `pulsar: cannot subscribe to ${options.topic} (subscription ${options.subscription})`, { operation: 'consume', topic: options.topic });
    }
  }

  protected async openProducer(topic: string, signal: AbortSignal | undefined): Promise<NativeProducerHandle> {
    const sendTimeoutMs = this.settings.sendTimeoutMs ?? 30_000;
    const creating = this.client.createProducer({
      topic,
      sendTimeoutMs,
      maxPendingMessages: this.settings.maxPendingMessages ?? 10_000,
      blockIfQueueFull: true,
      batchingEnabled: true,
      batchingMaxPublishDelayMs: this.settings.batchingMaxPublishDelayMs ?? 1,
      ...(this.settings.batchingMaxMessages !== undefined ? { batchingMaxMessages: this.settings.batchingMaxMessages } : {}),
    });
    try {
      const native = await abortable(creating, signal, `creating a producer for ${topic}`, (late) => void late.close());
      return new NativeProducerHandle(
        topic,
        native,
        isPersistentTopic(topic) ? undefined : { window: this.nonPersistentWindow, onDropped: this.dropped.record, sendTimeoutMs },
      );
    } catch (err) {
      throw wrap(err, `pulsar: cannot create a producer for ${topic}`, { operation: 'produce', topic });
    }
  }

  /** The client of broker connection `connection`: the first is the transport's own, the others are made when first asked for. */
  private clientFor(connection: number): NativeClient {
    if (connection === 0) return this.client;
    while (this.more.length < connection) this.more.push(this.newClient());
    return this.more[connection - 1]!;
  }

  protected override async closeClient(): Promise<void> {
    const closing = await Promise.allSettled([this.client, ...this.more].map((client) => client.close()));
    // What libpulsar still logs about its connections must reach us before the process may exit.
    await this.nativeLog.quiet();
    for (const r of closing) if (r.status === 'rejected') throw r.reason;
  }
}

/** libpulsar errors are plain Errors; name the operation and keep the cause. Ours pass through. */
/**
 * libpulsar's error as a TransportError naming what failed. Its AuthenticationError and
 * AuthorizationError are refusals, said as the WebSocket transport says them and not retried.
 */
function wrap(err: unknown, what: string, refused?: { readonly operation: BrokerOperation; readonly topic: string }): Error {
  if (err instanceof ToolwireError) return err;
  const message = errorMessage(err);
  if (refused && /AuthenticationError/.test(message)) return new TransportError(`${what}: ${NOT_AUTHENTICATED}`, { cause: err, retriable: false });
  if (refused && /AuthorizationError/.test(message)) {
    return new TransportError(`${what}: ${notAuthorized(refused.operation, refused.topic)}`, { cause: err, retriable: false });
  }
  return new TransportError(`${what}: ${message}`, { cause: err });
}
