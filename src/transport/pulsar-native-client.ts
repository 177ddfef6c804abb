import { ConfigError, errorMessage } from '../errors.js';

/**
 * The parts of the optional npm package `pulsar-client` (1.x) this transport uses, typed
 * here so nothing untyped leaks from a module that may not be installed. Names and shapes
 * follow its own index.d.ts.
 */
export type NativeLogLevel = 0 | 1 | 2 | 3; // DEBUG, INFO, WARN, ERROR

export interface NativeClientConfig {
  serviceUrl: string;
  authentication?: unknown;
  operationTimeoutSeconds?: number;
  tlsTrustCertsFilePath?: string;
  tlsCertificateFilePath?: string;
  tlsPrivateKeyFilePath?: string;
  tlsValidateHostname?: boolean;
  tlsAllowInsecureConnection?: boolean;
  log?: (level: NativeLogLevel, file: string, line: number, message: string) => void;
}

export interface NativeProducerConfig {
  topic: string;
  sendTimeoutMs?: number;
  maxPendingMessages?: number;
  blockIfQueueFull?: boolean;
  batchingEnabled?: boolean;
  batchingMaxPublishDelayMs?: number;
  batchingMaxMessages?: number;
}

export interface NativeConsumerConfig {
  topic: string;
  subscription: string;
  subscriptionType?: 'Exclusive' | 'Shared' | 'KeyShared' | 'Failover';
  subscriptionInitialPosition?: 'Latest' | 'Earliest';
  receiverQueueSize?: number;
  nAckRedeliverTimeoutMs?: number;
  deadLetterPolicy?: { deadLetterTopic: string; maxRedeliverCount?: number };
  /** What batchReceive() waits for: this many messages or bytes, or else the timeout. */
  batchReceivePolicy?: { maxNumMessages?: number; maxNumBytes?: number; timeoutMs?: number };
}

export interface NativeMessageId {
  toString(): string;
}

export interface NativeMessage {
  getData(): Buffer;
  getProperties(): Record<string, string>;
  getMessageId(): NativeMessageId;
  getRedeliveryCount(): number;
  getPublishTimestamp(): number;
  getTopicName(): string;
}

export interface NativeProducer {
  send(message: { data: Buffer; properties?: Record<string, string> }): Promise<NativeMessageId>;
  flush(): Promise<unknown>;
  close(): Promise<unknown>;
  isConnected(): boolean;
}

export interface NativeConsumer {
  receive(timeoutMs?: number): Promise<NativeMessage>;
  /** Up to the policy's count or bytes: at once when that many wait, else what there is (maybe nothing) at its timeout. */
  batchReceive(): Promise<NativeMessage[]>;
  acknowledge(message: NativeMessage): Promise<unknown>;
  negativeAcknowledge(message: NativeMessage): void;
  close(): Promise<unknown>;
  /** Removes the subscription from the broker (and closes the consumer). */
  unsubscribe(): Promise<unknown>;
  isConnected(): boolean;
}

export interface NativeClient {
  createProducer(config: NativeProducerConfig): Promise<NativeProducer>;
  subscribe(config: NativeConsumerConfig): Promise<NativeConsumer>;
  close(): Promise<unknown>;
}

export interface PulsarClientModule {
  Client: new (config: NativeClientConfig) => NativeClient;
  /** A function token is called at each connect and auth challenge (pulsar-client 1.9+). */
  AuthenticationToken: new (params: { token: string | (() => Promise<string>) }) => unknown;
}

/** How the module is imported; a parameter so tests can stand in for the real package. */
export type ModuleImporter = (specifier: string) => Promise<unknown>;

// A variable specifier: TypeScript does not try to resolve a package that may be absent.
const SPECIFIER = 'pulsar-client';
const defaultImporter: ModuleImporter = (specifier) => import(specifier);

function isModule(value: unknown): value is PulsarClientModule {
  if (typeof value !== 'object' || value === null) return false;
  const o = value as Record<string, unknown>;
  return typeof o['Client'] === 'function' && typeof o['AuthenticationToken'] === 'function';
}

/**
 * Load `pulsar-client` on demand. It is a CommonJS module (`module.exports = {...}`), so an
 * ESM import usually puts it under `default`. When it is missing or its native binary does
 * not load, the ConfigError says so and names the `pulsar-ws` alternative.
 */
export async function loadPulsarClient(importer: ModuleImporter = defaultImporter): Promise<PulsarClientModule> {
  let mod: unknown;
  try {
    mod = await importer(SPECIFIER);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    const what = missing ? 'is not installed' : 'failed to load (its native libpulsar binary may not match this platform)';
    throw new ConfigError(
      [
        `transport "pulsar" needs the optional npm package pulsar-client, which ${what}: ${errorMessage(err)}. ` +
          'Install it where a prebuilt binary is available (npm install pulsar-client), ' +
          'or use transport "pulsar-ws", which speaks to the same broker through its WebSocket API (pure JS, web port 8080).',
      ],
      { cause: err },
    );
  }
  const candidate = isModule(mod) ? mod : (mod as { default?: unknown } | null)?.default;
  if (!isModule(candidate)) {
    throw new ConfigError([
      'the installed pulsar-client does not export Client and AuthenticationToken as expected (version 1.x is supported); use transport "pulsar-ws" instead',
    ]);
  }
  return candidate;
}
