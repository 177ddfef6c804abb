import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AbortedError, ConfigServiceError, TimeoutError } from '../../errors.js';
import { ID_PROPERTY } from '../../envelope/properties.js';
import type { Subscription, Transport } from '../../transport/transport.js';
import { DEFAULT_CONFIG_QUEUES, configResponseSchema, type ConfigQueues, type ConfigApi, type ConfigRequest, type ConfigResponse } from './config-wire.js';

interface Pending {
  resolve(r: ConfigResponse): void;
  reject(err: Error): void;
}

/**
 * TrustGraph's config service over the broker, as TrustGraph's own processors reach it: a
 * request on its request topic, the answer picked by `id` from its response topic, which this
 * client reads on a private subscription of its own.
 */
export class BrokerConfigApi implements ConfigApi {
  readonly description: string;
  private readonly queues: ConfigQueues;
  private responses: Promise<Subscription> | undefined;
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
    private readonly options: { readonly queues?: ConfigQueues; readonly timeoutMs?: number } = {},
  ) {
    this.queues = options.queues ?? DEFAULT_CONFIG_QUEUES;
    this.description = `TrustGraph config service on ${this.queues.request}`;
  }

  private listen(signal?: AbortSignal): Promise<Subscription> {
    this.responses ??= this.transport.subscribe(
      { topic: this.queues.response, subscription: `toolwire-config-${randomUUID()}`, type: 'Exclusive', unsubscribeOnClose: true },
      signal,
    );
    const s = this.responses;
    s.then((sub) => this.route(sub)).catch(() => {
      if (this.responses === s) this.responses = undefined;
    });
    return s;
  }

  private async route(sub: Subscription): Promise<void> {
    for await (const msg of sub) {
      await msg.ack();
      const waiter = this.pending.get(msg.properties[ID_PROPERTY] ?? '');
      if (!waiter) continue; // another client's answer
      try {
        waiter.resolve(configResponseSchema.parse(JSON.parse(msg.data.toString('utf8'))));
      } catch (err) {
        waiter.reject(new ConfigServiceError(`the config service sent an answer this client cannot read: ${(err as Error).message}`));
      }
    }
  }

  async request(req: ConfigRequest, signal?: AbortSignal): Promise<ConfigResponse> {
    // The response subscription must exist before the request goes: the topic keeps nothing.
    await this.listen(signal);
    const id = randomUUID();
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    const answer = new Promise<ConfigResponse>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const failed = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(`the config service did not answer within ${timeoutMs} ms (is it running?)`)), timeoutMs);
      onAbort = () => reject(new AbortedError('config request aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const producer = await this.transport.producer(this.queues.request, signal);
      await producer.send({ data: JSON.stringify(req), properties: { [ID_PROPERTY]: id } }, signal);
      this.log.debug({ operation: req.operation, workspace: req.workspace, id }, 'config request sent');
      return await Promise.race([answer, failed]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      this.pending.delete(id);
    }
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) p.reject(new AbortedError('config client closed'));
    this.pending.clear();
    const s = this.responses;
    this.responses = undefined;
    await (await s?.catch(() => undefined))?.close();
  }
}
