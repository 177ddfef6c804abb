import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { encodeRequest, type ToolRequest } from '../envelope/request.js';
import { decodeResponse, type ToolResponse } from '../envelope/response.js';
import { AbortedError, ErrorCode, TimeoutError, ToolwireError } from '../errors.js';
import { AsyncQueue } from '../async/async-queue.js';
import type { Subscription, Transport } from '../transport/transport.js';
import { cancelTopic } from '../transport/topic-name.js';
import { injectTraceContext } from '../tracing/trace-context.js';
import { CANCEL_PROPERTY, ID_PROPERTY, SEQ_PROPERTY, STREAM_PROPERTY, TOOL_PROPERTY } from '../envelope/properties.js';

export interface CallOptions extends ToolRequest {
  readonly requestQueue: string;
  readonly responseQueue: string;
  /** Ask for a streamed answer (the `toolwire-stream` property). */
  readonly stream?: boolean;
  /** Name the tool outright (the `toolwire-tool` property). */
  readonly tool?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** An error response, as the agent receives it. */
export class ToolResponseError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'ToolResponseError';
  }
}

/** A response message and its place in a streamed answer (SEQ_PROPERTY), when it has one. */
interface Numbered {
  readonly response: ToolResponse;
  readonly seq: number | undefined;
}

/**
 * A streamed answer whose messages are not numbered 0, 1, 2...: one was dropped (a
 * non-persistent topic drops under load), or the answer started over (its worker stopped
 * mid-stream and another took the request). Either way the text would be wrong; retriable.
 */
function brokenStream(expected: number, seq: number): ToolwireError {
  const what =
    seq === 0
      ? 'the answer started over (its worker stopped mid-stream and the request went to another)'
      : `message ${expected} of the answer never arrived (got ${seq}; a non-persistent response topic drops messages under load)`;
  return new ToolwireError(ErrorCode.Transport, `incomplete streamed answer: ${what}`, { retriable: true });
}

/**
 * The agent side: publishes requests with an `id` property and matches responses by it, as
 * TrustGraph's RequestResponseClient does. One subscription per response queue, shared by
 * every call; messages with an unknown id are acked and ignored.
 */
export class ToolClient {
  private readonly subscriptions = new Map<string, Promise<Subscription>>();
  private readonly pending = new Map<string, AsyncQueue<Numbered>>();
  private closed = false;

  constructor(
    private readonly transport: Transport,
    private readonly log?: Logger,
  ) {}

  private listen(responseQueue: string): Promise<Subscription> {
    let s = this.subscriptions.get(responseQueue);
    if (!s) {
      s = this.transport.subscribe({
        topic: responseQueue,
        subscription: `toolwire-client-${randomUUID()}`,
        type: 'Exclusive',
        receiverQueueSize: 1000,
        // Private to this client: nothing may be left on the broker once it closes.
        unsubscribeOnClose: true,
      });
      this.subscriptions.set(responseQueue, s);
      s.then((sub) => this.route(sub)).catch(() => this.subscriptions.delete(responseQueue));
    }
    return s;
  }

  private async route(sub: Subscription): Promise<void> {
    for await (const msg of sub) {
      await msg.ack();
      const q = this.pending.get(msg.properties[ID_PROPERTY] ?? '');
      if (!q) continue;
      try {
        const seq = msg.properties[SEQ_PROPERTY];
        q.push({ response: decodeResponse(msg.data), seq: seq === undefined ? undefined : Number(seq) });
      } catch (err) {
        this.log?.warn({ err, requestId: msg.properties[ID_PROPERTY] }, 'undecodable response ignored');
      }
    }
  }

  /** Every response message of one request, ending with the one marked end_of_stream. */
  async *stream(options: CallOptions): AsyncGenerator<ToolResponse> {
    if (this.closed) throw new AbortedError('client is closed');
    await this.listen(options.responseQueue);
    const id = randomUUID();
    const queue = new AsyncQueue<Numbered>();
    this.pending.set(id, queue);
    const timeoutMs = options.timeoutMs ?? 600_000;
    const timer = setTimeout(() => {
      queue.end();
      failure = new TimeoutError(`no final answer within ${timeoutMs} ms`);
    }, timeoutMs);
    let failure: ToolwireError | undefined;
    const onAbort = () => {
      failure = new AbortedError('call aborted');
      queue.end();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let sent = false;
    let settled = false;
    try {
      const properties: Record<string, string> = { [ID_PROPERTY]: id };
      if (options.stream) properties[STREAM_PROPERTY] = 'true';
      if (options.tool) properties[TOOL_PROPERTY] = options.tool;
      // The caller's span, if it has one, becomes the parent of the worker's.
      injectTraceContext(properties);
      const producer = await this.transport.producer(options.requestQueue, options.signal);
      await producer.send({ data: encodeRequest(options), properties }, options.signal);
      sent = true;
      let expected = 0;
      for await (const { response: r, seq } of queue) {
        if (seq !== undefined) {
          if (seq !== expected) throw brokenStream(expected, seq);
          expected++;
        }
        if (r.endOfStream || r.error) settled = true;
        yield r;
        if (settled) return;
      }
      throw failure ?? new AbortedError('call ended without a final answer');
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      this.pending.delete(id);
      // Given up on (aborted, timed out, or left by the caller): let the worker stop the work.
      if (sent && !settled) void this.cancel(options.requestQueue, id);
    }
  }

  /** Best effort: a cancel that cannot be sent leaves the call to its timeout. */
  private async cancel(requestQueue: string, id: string): Promise<void> {
    const topic = cancelTopic(requestQueue);
    if (!topic || this.closed) return;
    try {
      await (await this.transport.producer(topic)).send({ data: '', properties: { [CANCEL_PROPERTY]: id } });
    } catch (err) {
      this.log?.debug({ err, requestId: id }, 'cancel not sent');
    }
  }

  /** The whole observation text; an error response is thrown as ToolResponseError. */
  async call(options: CallOptions): Promise<string> {
    const parts: string[] = [];
    for await (const r of this.stream(options)) {
      if (r.error) throw new ToolResponseError(r.error.type as ErrorCode, r.error.message);
      parts.push(r.response);
    }
    return parts.join('');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const q of this.pending.values()) q.end();
    for (const s of this.subscriptions.values()) await (await s.catch(() => undefined))?.close();
    this.subscriptions.clear();
  }
}
