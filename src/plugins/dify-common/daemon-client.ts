import { ToolFailedError, UnavailableError } from '../../errors.js';
import { abortError } from '../../async/abort-error.js';
import { injectTraceContext } from '../../tracing/trace-context.js';
import { unwrapDifyError } from './dify-error.js';
import { isPlainObject } from '../../plain-object.js';
import type { StreamItem } from './observe-stream.js';
import { SseParser } from '../../sse/sse-parser.js';

/** Dify's tool payload (`data` of every tool endpoint). */
import type { ToolInvokeData } from './prepare-invocation.js';
import { parsePluginJson } from './plugin-json.js';
export type { ToolInvokeData };

export interface DaemonEndpoint {
  /** Base URL without a trailing slash. */
  readonly url: string;
  readonly key: string;
  readonly tenantId: string;
}

/** An error body is read whole, but never without bound. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** A line (one event) longer than this means the stream is not what we expect. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;
/** Statuses of something in front of the daemon that cannot reach it: worth a retry. */
const UNAVAILABLE = new Set([502, 503, 504]);

function connectionCode(err: unknown): string {
  let e: unknown = err;
  for (let i = 0; i < 4 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return 'connection failed';
}

async function readLimited(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(parts).subarray(0, maxBytes).toString('utf8');
}

/**
 * The plugin daemon's dispatch API: `POST {url}/plugin/{tenant}/dispatch/{path}` with the
 * worker's key, answered by Server-Sent Events of `{code, message, data}` envelopes. Yields
 * each envelope's data as a message and an error envelope as an error (then stops). An HTTP
 * error before the stream is an error item too, except 502/503/504 and an unreachable daemon,
 * which throw UnavailableError (retriable).
 */
export class DifyDaemonClient {
  constructor(private readonly endpoint: DaemonEndpoint) {}

  /**
   * `message_id`: the request's idempotency key (its id, the same on every delivery). The
   * daemon hands it to the plugin's session (`self.session.message_id`), where Dify puts its
   * own message's id: the one place of the invoke that reaches the plugin and means "this run".
   */
  invokeTool(pluginId: string, body: { user_id: string; message_id: string; data: ToolInvokeData }, signal: AbortSignal): AsyncGenerator<StreamItem> {
    // Key order and the explicit nulls follow what Dify itself sends.
    const payload = { user_id: body.user_id, conversation_id: null, app_id: null, message_id: body.message_id, data: body.data };
    return this.dispatch('tool/invoke', pluginId, payload, signal);
  }

  getRuntimeParameters(
    pluginId: string,
    body: { user_id: string; data: Omit<ToolInvokeData, 'tool_parameters' | 'credential_type'> },
    signal: AbortSignal,
  ): AsyncGenerator<StreamItem> {
    const payload = { user_id: body.user_id, conversation_id: null, app_id: null, message_id: null, data: body.data };
    return this.dispatch('tool/get_runtime_parameters', pluginId, payload, signal);
  }

  async *dispatch(path: string, pluginId: string, payload: unknown, callSignal: AbortSignal): AsyncGenerator<StreamItem> {
    // Our own controller too, so leaving the loop early (an error event, a consumer that
    // stops) closes the connection instead of leaving the daemon streaming into nothing.
    const local = new AbortController();
    const signal = AbortSignal.any([callSignal, local.signal]);
    const url = `${this.endpoint.url}/plugin/${encodeURIComponent(this.endpoint.tenantId)}/dispatch/${path}`;
    try {
      let response: Response;
      try {
        const headers: Record<string, string> = { 'X-Api-Key': this.endpoint.key, 'X-Plugin-ID': pluginId, 'Content-Type': 'application/json' };
        injectTraceContext(headers);
        response = await fetch(url, {
          method: 'POST',
          headers,
          body: JSON.stringify(payload),
          signal,
        });
      } catch (err) {
        if (callSignal.aborted) throw abortError(callSignal);
        throw new UnavailableError(`tool invoke error: the plugin daemon cannot be reached (${connectionCode(err)})`);
      }

      if (response.status !== 200) {
        const text = await readLimited(response.body, MAX_ERROR_BODY_BYTES).catch(() => '');
        if (UNAVAILABLE.has(response.status)) {
          throw new UnavailableError(`tool invoke error: the plugin daemon is unavailable (HTTP ${response.status})`);
        }
        yield { kind: 'error', error: unwrapDifyError(text, response.status) };
        return;
      }
      if (!response.body) return;

      // A fetch body's chunks are bytes; Node's types leave them `any`.
      const body: ReadableStream<Uint8Array> = response.body;
      const reader = body.getReader();
      const decoder = new TextDecoder('utf-8');
      const parser = new SseParser();
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          if (callSignal.aborted) throw abortError(callSignal);
          throw new ToolFailedError(`tool invoke error: the connection to the plugin daemon broke mid-stream (${connectionCode(err)})`);
        }
        const events = chunk.done ? [...parser.push(decoder.decode()), ...parser.end()] : parser.push(decoder.decode(chunk.value, { stream: true }));
        for (const ev of events) {
          const item = this.item(ev.data);
          yield item;
          if (item.kind === 'error') return;
        }
        if (chunk.done) return;
        if (parser.pendingLength > MAX_EVENT_CHARS) {
          throw new ToolFailedError(`tool invoke error: the plugin daemon sent an event larger than ${MAX_EVENT_CHARS} characters`);
        }
      }
    } finally {
      local.abort();
    }
  }

  private item(data: string): StreamItem {
    let envelope: unknown;
    try {
      envelope = parsePluginJson(data);
    } catch {
      throw new ToolFailedError('tool invoke error: the plugin daemon sent an event that is not JSON');
    }
    // Any error shape is unwrapDifyError's to read; the message is parseInvokeMessage's.
    if (isPlainObject(envelope)) {
      if (envelope['code'] === 0) return { kind: 'message', value: envelope['data'] };
      if ('code' in envelope || 'error_type' in envelope) return { kind: 'error', error: unwrapDifyError(envelope) };
    }
    throw new ToolFailedError('tool invoke error: the plugin daemon sent an event without an envelope');
  }
}
