import type { Logger } from 'pino';
import { privateSubscription } from '../../transport/private-subscription.js';
import type { Subscription, Transport } from '../../transport/transport.js';
import { DESCRIPTOR_TYPES, type ConfigSnapshot, type ConfigSource } from '../config-source.js';
import { BrokerConfigApi } from './broker-config-api.js';
import { DEFAULT_CONFIG_QUEUES, configPushSchema, type ConfigPush, type ConfigQueues } from './config-wire.js';
import { TrustGraphConfigStore } from './trustgraph-store.js';

export interface TrustGraphSourceOptions {
  readonly workspace: string;
  readonly queues?: ConfigQueues;
  /** A read now and then, in case a poke was lost (they are non-persistent); 0 turns it off. */
  readonly pollMs?: number;
  readonly requestTimeoutMs?: number;
}

/**
 * One workspace of TrustGraph's config service, followed the way TrustGraph's processors
 * follow it: subscribe to the pokes first, then read; on a poke newer than the last read
 * that names either descriptor type in this workspace (or none: the service's startup poke
 * means everything), read both types again.
 */
export class TrustGraphSource implements ConfigSource {
  readonly description: string;
  private readonly api: BrokerConfigApi;
  private readonly store: TrustGraphConfigStore;
  private pokes: Subscription | undefined;
  private poll: NodeJS.Timeout | undefined;
  private seen = -1;

  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
    private readonly options: TrustGraphSourceOptions,
  ) {
    this.api = new BrokerConfigApi(transport, log, { queues: options.queues, timeoutMs: options.requestTimeoutMs });
    this.store = new TrustGraphConfigStore(this.api, options.workspace);
    this.description = `TrustGraph config service, workspace ${options.workspace}`;
  }

  async watch(changed: () => void, signal?: AbortSignal): Promise<void> {
    this.pokes = await privateSubscription(this.transport, (this.options.queues ?? DEFAULT_CONFIG_QUEUES).push, 'toolwire-notify', signal ? { signal } : {});
    void this.listen(this.pokes, changed);
    const pollMs = this.options.pollMs ?? 30_000;
    if (pollMs > 0) {
      this.poll = setInterval(changed, pollMs);
      this.poll.unref();
    }
  }

  private async listen(pokes: Subscription, changed: () => void): Promise<void> {
    try {
      for await (const msg of pokes) {
        await msg.ack();
        let push: ConfigPush;
        try {
          push = configPushSchema.parse(JSON.parse(msg.data.toString('utf8')));
        } catch (err) {
          this.log.warn({ err }, 'unreadable config poke ignored');
          continue;
        }
        if (push.version > this.seen && this.concerns(push)) changed();
      }
    } catch (err) {
      this.log.error({ err }, 'config pokes no longer read; polling only');
    }
  }

  private concerns(push: ConfigPush): boolean {
    const changes = push.changes ?? {};
    if (Object.keys(changes).length === 0) return true;
    return DESCRIPTOR_TYPES.some((type) => changes[type]?.includes(this.options.workspace));
  }

  async read(signal?: AbortSignal): Promise<ConfigSnapshot> {
    const { version, entries } = await this.store.read(DESCRIPTOR_TYPES, signal);
    this.seen = Math.max(this.seen, version);
    return { version: String(version), entries };
  }

  async close(): Promise<void> {
    clearInterval(this.poll);
    await this.pokes?.close().catch(() => undefined);
    await this.api.close();
  }
}
