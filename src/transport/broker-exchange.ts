import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AbortedError, TimeoutError, type ToolwireError } from '../errors.js';
import { ID_PROPERTY } from '../envelope/properties.js';
import { AsyncQueue } from '../async/async-queue.js';
import { abortable } from '../async/abortable.js';
import { privateSubscription } from './private-subscription.js';
import type { Subscription, Transport } from './transport.js';

/** One answer message of a request, as it came: the body is the service's own format. */
export interface Answer {
  readonly data: Buffer;
  readonly properties: Readonly<Record<string, string>>;
}

export interface ExchangeOptions {
  readonly requestQueue: string;
  readonly responseQueue: string;
  readonly data: string | Buffer;
  /** Sent beside the `id` property. */
  readonly properties?: Readonly<Record<string, string>>;
  /** The correlation id; a fresh one when absent. */
  readonly id?: string;
  /** No answer after this long ends the exchange with TimeoutError; absent: only `signal` bounds it. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /**
   * Called as the request is handed to the producer: from then on a worker may have it, even
   * when the wait for the broker's receipt is cut short (whoever started work may need telling
   * it stopped).
   */
  readonly onSent?: (id: string) => void;
}

/**
 * Request/response on the broker as TrustGraph does it: the request goes out with an `id`
 * property, every answer message carries it back on a response topic. One private subscription
 * per response topic serves every request of this client; an answer nobody waits for is acked
 * and dropped. What ends an answer (an end-of-stream flag, an error) is the caller's to say: it
 * stops reading. The one correlator of the process: the tool client, plugins that call
 * TrustGraph services, and the TrustGraph config client all ask through it.
 */
export class BrokerExchange {
  private readonly subscriptions = new Map<string, Promise<Subscription>>();
  private readonly pending = new Map<string, AsyncQueue<Answer>>();
  private closed = false;

  constructor(
    private readonly transport: Transport,
    private readonly log?: Logger,
    /** Prefix of the private subscriptions' names, so a broker's admin can tell whose they are. */
    private readonly subscriptionPrefix = 'toolwire-client',
  ) {}

  /** No caller's signal here: the subscription is shared, one caller giving up must not fail the others. */
  private listen(responseQueue: string): Promise<Subscription> {
    let s = this.subscriptions.get(responseQueue);
    if (!s) {
      s = privateSubscription(this.transport, responseQueue, this.subscriptionPrefix, { receiverQueueSize: 1000 });
      this.subscriptions.set(responseQueue, s);
      const opened = s;
      // A subscription that failed to open or ended is forgotten: the next request opens another.
      const forget = (): void => {
        if (this.subscriptions.get(responseQueue) === opened) this.subscriptions.delete(responseQueue);
      };
      opened.then(
        (sub) =>
          this.route(sub)
            .catch((err: unknown) => this.log?.warn({ err, topic: responseQueue }, 'answers no longer read; the next request subscribes again'))
            .finally(forget),
        forget,
      );
    }
    return s;
  }

  private async route(sub: Subscription): Promise<void> {
    for await (const msg of sub) {
      await msg.ack();
      this.pending.get(msg.properties[ID_PROPERTY] ?? '')?.push({ data: msg.data, properties: msg.properties });
    }
  }

  /**
   * Send one request and yield each answer message for it, until the caller stops reading.
   * Ends with AbortedError when `signal` aborts or the client closes, TimeoutError past `timeoutMs`.
   */
  async *request(options: ExchangeOptions): AsyncGenerator<Answer> {
    if (this.closed) throw new AbortedError('client is closed');
    // The response subscription must exist before the request goes: a non-persistent topic keeps
    // nothing. A caller that gives up stops waiting for it; the opening goes on for the others.
    await abortable(this.listen(options.responseQueue), options.signal, 'the response subscription');
    const id = options.id ?? randomUUID();
    const queue = new AsyncQueue<Answer>();
    this.pending.set(id, queue);
    let failure: ToolwireError | undefined;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            failure = new TimeoutError(`no final answer within ${options.timeoutMs} ms`);
            queue.end();
          }, options.timeoutMs);
    const onAbort = (): void => {
      failure = new AbortedError('call aborted');
      queue.end();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      try {
        // abortable: the caller's signal holds even where opening or sending does not heed it (a
        // send waiting out the client's send timeout during an outage).
        const producer = await abortable(this.transport.producer(options.requestQueue, options.signal), options.signal, 'the request producer');
        // Told before the send, not between making its promise and awaiting it: a throw there
        // would leave that promise with no handler.
        options.onSent?.(id);
        await abortable(
          producer.send({ data: options.data, properties: { ...options.properties, [ID_PROPERTY]: id } }, options.signal),
          options.signal,
          'the request',
        );
      } catch (err) {
        // Aborted or timed out before the broker's receipt came: the call ends as any other
        // aborted call does, though a worker may already have the request (onSent was told).
        throw failure ?? err;
      }
      for await (const answer of queue) yield answer;
      throw failure ?? new AbortedError('call ended without a final answer');
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      this.pending.delete(id);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.pending.values()) q.end();
    for (const s of this.subscriptions.values()) await (await s.catch(() => undefined))?.close();
    this.subscriptions.clear();
  }
}
