import type { Logger } from 'pino';
import { encodeRequest, type ToolRequest } from '../envelope/request.js';
import { decodeResponse, type ToolResponse } from '../envelope/response.js';
import { ErrorCode, errorMessage, ToolwireError } from '../errors.js';
import type { Transport } from '../transport/transport.js';
import { cancelTopic } from '../transport/topic-name.js';
import { injectTraceContext } from '../tracing/trace-context.js';
import { CANCEL_PROPERTY, HOPS_PROPERTY, SEQ_PROPERTY, STREAM_PROPERTY, TOOL_PROPERTY } from '../envelope/properties.js';
import { BrokerExchange } from '../transport/broker-exchange.js';

export interface CallOptions extends ToolRequest {
  readonly requestQueue: string;
  readonly responseQueue: string;
  /** Ask for a streamed answer (the `toolwire-stream` property). */
  readonly stream?: boolean;
  /** Name the tool outright (the `toolwire-tool` property). */
  readonly tool?: string;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Agent calls the request is nested in (the `toolwire-hops` property); an agent's own request has none. */
  readonly hops?: number;
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
 * TrustGraph's RequestResponseClient does (the correlation is BrokerExchange's). One
 * subscription per response queue, shared by every call; messages with an unknown id are
 * acked and ignored.
 */
export class ToolClient {
  /** Request/response on the broker, for plugins that call TrustGraph services besides tools. */
  readonly exchange: BrokerExchange;
  private closed = false;

  constructor(
    private readonly transport: Transport,
    private readonly log?: Logger,
  ) {
    this.exchange = new BrokerExchange(transport, log);
  }

  /** Every response message of one request, ending with the one marked end_of_stream. */
  async *stream(options: CallOptions): AsyncGenerator<ToolResponse> {
    const properties: Record<string, string> = {};
    if (options.stream) properties[STREAM_PROPERTY] = 'true';
    if (options.tool) properties[TOOL_PROPERTY] = options.tool;
    if (options.hops !== undefined) properties[HOPS_PROPERTY] = String(options.hops);
    // The caller's span, if it has one, becomes the parent of the worker's.
    injectTraceContext(properties);
    let sentId: string | undefined;
    let settled = false;
    try {
      const answers = this.exchange.request({
        requestQueue: options.requestQueue,
        responseQueue: options.responseQueue,
        data: encodeRequest(options),
        properties,
        timeoutMs: options.timeoutMs ?? 600_000,
        ...(options.signal ? { signal: options.signal } : {}),
        onSent: (id) => (sentId = id),
      });
      let expected = 0;
      for await (const answer of answers) {
        let r: ToolResponse;
        try {
          r = decodeResponse(answer.data);
        } catch (err) {
          // The answer to this very request: waiting on would only end at the timeout.
          throw new ToolwireError(ErrorCode.ToolFailed, `the tool service answered in a form toolwire cannot read: ${errorMessage(err)}`, {
            retriable: false,
            cause: err,
          });
        }
        const seqText = answer.properties[SEQ_PROPERTY];
        if (seqText !== undefined) {
          const seq = Number(seqText);
          if (seq !== expected) throw brokenStream(expected, seq);
          expected++;
        }
        if (r.endOfStream || r.error) settled = true;
        yield r;
        if (settled) return;
      }
    } finally {
      // Given up on (aborted, timed out, or left by the caller): let the worker stop the work.
      if (sentId !== undefined && !settled) void this.cancel(options.requestQueue, sentId);
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
      if (r.error) throw new ToolResponseError(r.error.type, r.error.message);
      parts.push(r.response);
    }
    return parts.join('');
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.exchange.close();
  }
}
