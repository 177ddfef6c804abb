import type { Logger } from 'pino';
import { ConfigError, ToolwireError, TransportError, errorMessage } from '../errors.js';
import { abortable } from './abortable.js';
import {
  loadPulsarClient,
  type ModuleImporter,
  type NativeClient,
  type NativeLogLevel,
  type NativeProducer,
} from './pulsar-native-client.js';
import { PulsarNativeSubscription } from './pulsar-native-consumer.js';
import { parseTopic } from './topic-name.js';
import { toBuffer, type OutgoingMessage, type Producer, type SubscribeOptions, type Subscription, type Transport } from './transport.js';

export interface PulsarNativeTransportSettings {
  readonly kind: 'pulsar';
  /** `pulsar://host:6650` or `pulsar+ssl://host:6651`. */
  readonly serviceUrl: string;
  readonly token?: string;
  readonly log: Logger;
  /** libpulsar's bound on lookups, producer and consumer creation; default 30. */
  readonly operationTimeoutSeconds?: number;
  /** A send not confirmed within this fails; default 30 000. */
  readonly sendTimeoutMs?: number;
  /** How long a batch may wait for more messages; default 1 (latency matters more than batch size here). */
  readonly batchingMaxPublishDelayMs?: number;
  /** Pending sends per producer before send() waits for room; default 10 000. */
  readonly maxPendingMessages?: number;
  /** receive() wait between checks for stop(); default 1000. */
  readonly receivePollMs?: number;
  /** For tests: how `pulsar-client` is imported. */
  readonly importer?: ModuleImporter;
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

class NativeProducerHandle implements Producer {
  closed = false;
  constructor(
    readonly topic: string,
    readonly native: NativeProducer,
  ) {}

  async send(message: OutgoingMessage, signal?: AbortSignal): Promise<void> {
    if (this.closed) throw new TransportError(`pulsar: producer for ${this.topic} is closed`, { retriable: false });
    const sending = this.native.send({ data: toBuffer(message.data), ...(message.properties ? { properties: message.properties } : {}) });
    try {
      // Abort stops the wait only: a message handed to libpulsar may still be published.
      await abortable(sending, signal, `send to ${this.topic}`);
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
export class PulsarNativeTransport implements Transport {
  readonly kind = 'pulsar';
  private readonly producers = new Map<string, Promise<NativeProducerHandle>>();
  private readonly openProducers = new Set<NativeProducerHandle>();
  private readonly subscriptions = new Set<PulsarNativeSubscription>();
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly client: NativeClient,
    private readonly settings: PulsarNativeTransportSettings,
    private readonly log: Logger,
  ) {}

  /** Throws ConfigError naming `pulsar-ws` when `pulsar-client` is not installed or does not load. */
  static async create(settings: PulsarNativeTransportSettings): Promise<PulsarNativeTransport> {
    const mod = await loadPulsarClient(settings.importer);
    const log = settings.log.child({ component: 'transport', transport: 'pulsar' });
    let client: NativeClient;
    try {
      client = new mod.Client({
        serviceUrl: settings.serviceUrl,
        operationTimeoutSeconds: settings.operationTimeoutSeconds ?? 30,
        ...(settings.token ? { authentication: new mod.AuthenticationToken({ token: settings.token }) } : {}),
        log: (level: NativeLogLevel, file: string, line: number, message: string) => {
          log[LOG_LEVELS[level] ?? 'info']({ file, line, detail: message }, 'libpulsar');
        },
      });
    } catch (err) {
      throw new ConfigError([`transport "pulsar": cannot create a client for ${settings.serviceUrl}: ${errorMessage(err)}`], { cause: err });
    }
    return new PulsarNativeTransport(client, settings, log);
  }

  get connected(): boolean {
    if (this.closing) return false;
    let any = false;
    for (const s of this.subscriptions) {
      if (!s.isConnected) return false;
      any = true;
    }
    for (const p of this.openProducers) {
      if (!p.native.isConnected()) return false;
      any = true;
    }
    return any;
  }

  async subscribe(options: SubscribeOptions, signal?: AbortSignal): Promise<Subscription> {
    this.assertOpen();
    const topic = canonicalTopic(options.topic);
    let sub: PulsarNativeSubscription;
    try {
      sub = await PulsarNativeSubscription.open(
        this.client,
        { ...options, topic },
        { log: this.log, receivePollMs: this.settings.receivePollMs ?? 1_000, onClosed: (s) => this.subscriptions.delete(s) },
        signal,
      );
    } catch (err) {
      throw wrap(err, `pulsar: cannot subscribe to ${topic} (subscription ${options.subscription})`);
    }
    if (this.closing) {
      await sub.close();
      this.assertOpen();
    }
    this.subscriptions.add(sub);
    return sub;
  }

  producer(topic: string, signal?: AbortSignal): Promise<Producer> {
    try {
      this.assertOpen();
      topic = canonicalTopic(topic);
    } catch (err) {
      return Promise.reject(err);
    }
    let p = this.producers.get(topic);
    if (p === undefined) {
      const creating = this.client.createProducer({
        topic,
        sendTimeoutMs: this.settings.sendTimeoutMs ?? 30_000,
        maxPendingMessages: this.settings.maxPendingMessages ?? 10_000,
        blockIfQueueFull: true,
        batchingEnabled: true,
        batchingMaxPublishDelayMs: this.settings.batchingMaxPublishDelayMs ?? 1,
      });
      p = abortable(creating, signal, `creating a producer for ${topic}`, (late) => void late.close()).then(
        (native) => {
          const handle = new NativeProducerHandle(topic, native);
          this.openProducers.add(handle);
          return handle;
        },
        (err: unknown) => {
          this.producers.delete(topic);
          throw wrap(err, `pulsar: cannot create a producer for ${topic}`);
        },
      );
      this.producers.set(topic, p);
    }
    return p;
  }

  /** Close subscriptions, flush and close producers, then the client. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    const steps: Promise<unknown>[] = [];
    for (const s of this.subscriptions) steps.push(s.close());
    for (const p of this.producers.values()) {
      steps.push(
        p.then(
          async (handle) => {
            handle.closed = true;
            await handle.native.flush();
            await handle.native.close();
          },
          () => undefined,
        ),
      );
    }
    for (const r of await Promise.allSettled(steps)) if (r.status === 'rejected') this.log.warn({ err: r.reason }, 'pulsar close step failed');
    try {
      await this.client.close();
    } catch (err) {
      this.log.warn({ err }, 'pulsar client close failed');
    }
    this.subscriptions.clear();
    this.producers.clear();
    this.openProducers.clear();
  }

  private assertOpen(): void {
    if (this.closing) throw new TransportError('pulsar transport is closed', { retriable: false });
  }
}

function canonicalTopic(topic: string): string {
  const t = parseTopic(topic);
  if ('error' in t) throw new ConfigError([t.error]);
  return t.full;
}

/** libpulsar errors are plain Errors; name the operation and keep the cause. Ours pass through. */
function wrap(err: unknown, what: string): Error {
  if (err instanceof ToolwireError) return err;
  return new TransportError(`${what}: ${errorMessage(err)}`, { cause: err });
}
