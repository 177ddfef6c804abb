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
import { BrokerTransport } from './broker-transport.js';
import { toBuffer, type OutgoingMessage, type Producer, type SubscribeOptions } from './transport.js';

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
  /** For tests: how `pulsar-client` is imported. */
  readonly importer?: ModuleImporter;
}

/**
 * libpulsar's levels (DEBUG, INFO, WARN, ERROR) as ours. Its INFO is chatter about its own
 * connections and lookups (some 40 lines for a start and one call), so it goes to debug;
 * warnings and errors keep their level.
 */
export const NATIVE_LOG_LEVELS = ['debug', 'debug', 'warn', 'error'] as const;

class NativeProducerHandle implements Producer {
  private closed = false;
  private closing: Promise<void> | undefined;
  private flushQueued = false;
  /** Sends handed to libpulsar and not yet confirmed. */
  private pending = 0;
  constructor(
    readonly topic: string,
    private readonly native: NativeProducer,
  ) {}

  get isConnected(): boolean {
    return !this.closed && this.native.isConnected();
  }

  private readonly settled = (): void => {
    this.pending--;
  };

  private readonly flushTurn = (): void => {
    this.flushQueued = false;
    // A failed flush fails the sends it carried, and they reject on their own.
    this.native.flush().catch(() => undefined);
  };

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
    const sending = this.native.send({ data: toBuffer(message.data), ...(message.properties ? { properties: message.properties } : {}) });
    // Under load, libpulsar's batch timer gathers sends into batches (more than twice the
    // throughput of unbatched sends at 64 in flight). A send that finds nothing else in
    // flight is alone: its batch leaves at the end of this event-loop turn instead of
    // waiting the timer out for company that is not coming (2.8 ms -> 0.7 ms a call at one
    // in flight, docs/benchmarks.md).
    if (this.pending === 0 && !this.flushQueued) {
      this.flushQueued = true;
      setImmediate(this.flushTurn);
    }
    this.pending++;
    sending.then(this.settled, this.settled);
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
export class PulsarNativeTransport extends BrokerTransport<PulsarNativeSubscription, NativeProducerHandle> {
  readonly kind = 'pulsar';

  private constructor(
    private readonly client: NativeClient,
    private readonly settings: PulsarNativeTransportSettings,
    log: Logger,
  ) {
    super(log);
  }

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
          log[NATIVE_LOG_LEVELS[level] ?? 'warn']({ file, line, detail: message }, 'libpulsar');
        },
      });
    } catch (err) {
      throw new ConfigError([`transport "pulsar": cannot create a client for ${settings.serviceUrl}: ${errorMessage(err)}`], { cause: err });
    }
    return new PulsarNativeTransport(client, settings, log);
  }

  protected async openSubscription(options: SubscribeOptions, signal: AbortSignal | undefined): Promise<PulsarNativeSubscription> {
    try {
      return await PulsarNativeSubscription.open(
        this.client,
        options,
        { log: this.log, onClosed: this.forget },
        signal,
      );
    } catch (err) {
      throw wrap(err, `pulsar: cannot subscribe to ${options.topic} (subscription ${options.subscription})`);
    }
  }

  protected async openProducer(topic: string, signal: AbortSignal | undefined): Promise<NativeProducerHandle> {
    const creating = this.client.createProducer({
      topic,
      sendTimeoutMs: this.settings.sendTimeoutMs ?? 30_000,
      maxPendingMessages: this.settings.maxPendingMessages ?? 10_000,
      blockIfQueueFull: true,
      batchingEnabled: true,
      batchingMaxPublishDelayMs: this.settings.batchingMaxPublishDelayMs ?? 1,
    });
    try {
      return new NativeProducerHandle(topic, await abortable(creating, signal, `creating a producer for ${topic}`, (late) => void late.close()));
    } catch (err) {
      throw wrap(err, `pulsar: cannot create a producer for ${topic}`);
    }
  }

  protected override async closeClient(): Promise<void> {
    await this.client.close();
  }
}

/** libpulsar errors are plain Errors; name the operation and keep the cause. Ours pass through. */
function wrap(err: unknown, what: string): Error {
  if (err instanceof ToolwireError) return err;
  return new TransportError(`${what}: ${errorMessage(err)}`, { cause: err });
}
