import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AbortedError, ConfigServiceError, TimeoutError } from '../../errors.js';
import { ID_PROPERTY } from '../../envelope/properties.js';
import { abortable } from '../../async/abortable.js';
import type { Subscription, Transport } from '../../transport/transport.js';
import { DEFAULT_CONFIG_QUEUES, configResponseSchema, type ConfigQueues, type ConfigApi, type ConfigRequest, type ConfigResponse } from './config-wire.js';

interface Pending {
  resolve(response: ConfigResponse): void;
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

  /**
   * The response subscription, opened once and read by one loop for as long as it lasts. When
   * it fails to open or ends, the next request opens another; a subscription is never read twice.
   */
  private listen(signal?: AbortSignal): Promise<Subscription> {
    if (this.responses) return this.responses;
    const s = this.transport.subscribe(
      { topic: this.queues.response, subscription: `toolwire-config-${randomUUID()}`, type: 'Exclusive', unsubscribeOnClose: true },
      signal,
    );
    this.responses = s;
    const forget = (): void => {
      if (this.responses === s) this.responses = undefined;
    };
    s.then(
      (sub) =>
        this.route(sub)
          .catch((err: unknown) => this.log.warn({ err, topic: this.queues.response }, 'config answers no longer read; the next request subscribes again'))
          .finally(() => {
            forget();
            void sub.close().catch(() => undefined);
          }),
      forget,
    );
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
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    // One deadline for the whole request, the subscription, the producer and the send included.
    const deadline = signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    const id = randomUUID();
    try {
      // The response subscription must exist before the request goes: the topic keeps nothing.
      await abortable(this.listen(deadline), deadline, 'config subscription');
      // The answer may come before the send returns, so it is awaited alongside the send, never later.
      const [, response] = await Promise.all([this.send(req, id, deadline), this.answer(id, deadline)]);
      return response;
    } catch (err) {
      if (!deadline.aborted || signal?.aborted) throw err;
      throw new TimeoutError(`the config service did not answer within ${timeoutMs} ms (is it running?)`, { cause: err });
    } finally {
      // After a failed send the answer still waits: settle it so it lets go of the deadline.
      this.pending.get(id)?.reject(new AbortedError('config request ended'));
      this.pending.delete(id);
    }
  }

  private async send(req: ConfigRequest, id: string, signal: AbortSignal): Promise<void> {
    // abortable: the deadline holds even where opening or sending does not heed the signal.
    const producer = await abortable(this.transport.producer(this.queues.request, signal), signal, 'config producer');
    await abortable(producer.send({ data: JSON.stringify(req), properties: { [ID_PROPERTY]: id } }, signal), signal, 'config request');
    this.log.debug({ operation: req.operation, workspace: req.workspace, id }, 'config request sent');
  }

  /** The answer to `id`, or AbortedError when `signal` aborts first. */
  private answer(id: string, signal: AbortSignal): Promise<ConfigResponse> {
    return new Promise<ConfigResponse>((resolve, reject) => {
      const onAbort = (): void => reject(new AbortedError('config request aborted', { cause: signal.reason }));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal.removeEventListener('abort', onAbort);
      this.pending.set(id, {
        resolve: (response) => (done(), resolve(response)),
        reject: (err) => (done(), reject(err)),
      });
    });
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) p.reject(new AbortedError('config client closed'));
    this.pending.clear();
    const s = this.responses;
    this.responses = undefined;
    await (await s?.catch(() => undefined))?.close();
  }
}
