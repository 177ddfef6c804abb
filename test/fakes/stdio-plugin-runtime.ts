/**
 * The plugin daemon's local runtime, for the fake daemon: one Python plugin process over stdio
 * (the real `dify_plugin` SDK, INSTALL_METHOD=local), sessions routed by `session_id`, and the
 * plugin's backwards invocations relayed to Dify's inner API the way the daemon relays them.
 *
 * Where each byte comes from (langgenius/dify-plugin-daemon at bdb5642a unless noted):
 * - request line to the plugin: internal/core/session_manager/session.go `Message` (keys
 *   session_id, conversation_id, message_id, app_id, endpoint_id, context, event, data) with
 *   event `request` and data = internal/core/io_tunnel/mapping.go `GetInvokePluginMap`
 *   (user_id, type, action, then the request's own fields);
 * - what the plugin writes: dify_plugin core/server/__base/response_writer.py (0.10.1) - one
 *   JSON object then a blank line; session messages `{"event":"session","session_id","data":
 *   {"type": stream|invoke|end|error, "data"}}`, plus `log` and `heartbeat` events;
 * - an `invoke` session message: io_tunnel/backwards_invocation/task.go - the request's own
 *   fields plus tenant_id, user_id and type from the session, decoded into the daemon's Go
 *   struct (so unknown fields such as model_type or history_prompt_messages are dropped), then
 *   POSTed to DIFY_INNER_API_URL/inner/api/<route> with X-Inner-Api-Key (calldify/http_request.go);
 * - the inner API's answer: length-prefixed frames (pkg/utils/parser/chunking.go) of
 *   `{"data": T, "error": ""}`; a non-empty error ends the call with `request failed: <error>`;
 * - back to the plugin: `backwards_response` lines of `{backwards_request_id, event:
 *   response|error|end, message, data}` (backwards_invocation/entities.go, request.go).
 *
 * Go's encoding, as the real daemon at bdb5642a was seen writing it (docs/dify-agent-strategies.md
 * §10): structs keep their declared field order, maps are sorted. So the request line's `data`
 * (a map) reaches the plugin with sorted keys at every level, strategy parameters included; a
 * relayed request is the Go struct (nested maps such as `parameters`, `completion_params`,
 * `tool_parameters` sorted, an empty `tool_calls` list kept as `[]`); and each LLM chunk the
 * inner API streams is decoded into the daemon's `LLMResultChunk` and encoded again before the
 * plugin sees it (`system_fingerprint`, `name`, `tool_call_id` become strings, `prompt_messages`
 * goes last, usage prices become decimal strings). The inner API request goes out chunked (no
 * Content-Length) with Go's user agent, `Accept-Encoding: gzip` and a `traceparent` per session.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { goJson, goStruct, type GoStruct } from './dify-wire.js';

export interface InnerApi {
  /** DIFY_INNER_API_URL, e.g. http://127.0.0.1:5001 */
  readonly url: string;
  /** DIFY_INNER_API_KEY */
  readonly key: string;
}

export interface StdioPluginOptions {
  readonly python: string;
  /** The plugin's directory (manifest.yaml, main.py). */
  readonly dir: string;
  readonly tenant: string;
  readonly innerApi: InnerApi;
}

/** What a session streams back to the dispatch handler. */
export type SessionEvent = { kind: 'stream'; data: Record<string, unknown> } | { kind: 'error'; data: Record<string, unknown> } | { kind: 'end' };

/** One backwards invocation the fake relayed, as the inner API received it. */
export interface RelayedInvocation {
  readonly route: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** performance.now() when the request went out, and when its answer ended (for benches). */
  readonly startedAt: number;
  endedAt: number | undefined;
}

const ROUTES: Record<string, string> = {
  llm: 'invoke/llm',
  llm_structured_output: 'invoke/llm/structured-output',
  tool: 'invoke/tool',
  text_embedding: 'invoke/text-embedding',
  rerank: 'invoke/rerank',
  tts: 'invoke/tts',
  speech2text: 'invoke/speech2text',
  moderation: 'invoke/moderation',
  app: 'invoke/app',
  node_parameter_extractor: 'invoke/parameter-extractor',
  node_question_classifier: 'invoke/question-classifier',
  system_summary: 'invoke/summary',
  encrypt: 'invoke/encrypt',
  multimodal_embedding: 'invoke/multimodal-embedding',
  multimodal_rerank: 'invoke/multimodal-rerank',
  upload_file: 'upload/file/request',
  fetch_app: 'fetch/app/info',
};
/**
 * What the daemon puts before an error, per invoke type: when the call fails, and when reading
 * its stream fails (backwards_invocation/task.go; seen from the real daemon for `tool`).
 */
const ERROR_PREFIX: Record<string, readonly [invoke: string, read?: string]> = {
  tool: ['invoke tool failed', 'read tool response failed'],
  llm: ['invoke llm model failed', 'read llm model failed'],
  llm_structured_output: ['invoke llm with structured output model failed', 'read llm with structured output model failed'],
  tts: ['invoke tts model failed', 'read tts model failed'],
  app: ['invoke app failed', 'read app failed'],
  text_embedding: ['invoke text-embedding model failed'],
  multimodal_embedding: ['invoke multimodal embedding model failed'],
  rerank: ['invoke rerank model failed'],
  multimodal_rerank: ['invoke multimodal rerank model failed'],
  speech2text: ['invoke speech2text model failed'],
  moderation: ['invoke moderation model failed'],
  node_parameter_extractor: ['invoke parameter extractor failed'],
  node_question_classifier: ['invoke question classifier failed'],
  system_summary: ['invoke summary failed'],
  upload_file: ['upload file failed'],
  fetch_app: ['fetch app failed'],
};
/** Routes the daemon reads as a stream (StreamResponse); the rest are one JSON body (Request). */
const STREAMED = new Set(['invoke/llm', 'invoke/llm/structured-output', 'invoke/tool', 'invoke/tts', 'invoke/app']);

type Obj = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A []PromptMessageToolCall: nil stays null, an empty list stays [] (Go keeps the difference). */
function goToolCalls(v: unknown): GoStruct[] | null {
  if (!Array.isArray(v)) return null;
  return v.map((c: Obj) => {
    const f = (c['function'] ?? {}) as Obj;
    return goStruct({ id: str(c['id']), type: str(c['type']), function: goStruct({ name: str(f['name']), arguments: str(f['arguments']) }) });
  });
}

/**
 * A PromptMessage of a relayed request (pkg/entities/model_entities/llm.go), decoded by
 * mapstructure (parser.MapToStruct): `content` is kept as the plugin sent it (a list's items
 * are maps, so sorted), absent strings become "".
 */
function goRequestPromptMessage(m: Obj): GoStruct {
  return goStruct({
    role: m['role'],
    content: m['content'] ?? null,
    name: str(m['name']),
    tool_calls: goToolCalls(m['tool_calls']),
    tool_call_id: str(m['tool_call_id']),
    ...(m['opaque_body'] !== undefined && m['opaque_body'] !== null ? { opaque_body: m['opaque_body'] } : {}),
  });
}

/** The daemon's Go struct for a request, in declared field order (dify_invocation/types.go). */
function goRequest(type: string, r: Obj): GoStruct {
  const base = { tenant_id: r['tenant_id'], user_id: r['user_id'], type };
  if (type === 'llm') {
    const choice = r['tool_choice'] as Obj | null | undefined;
    return goStruct({
      ...base,
      provider: str(r['provider']),
      model: str(r['model']),
      mode: str(r['mode']),
      completion_params: r['completion_params'] ?? null,
      prompt_messages: (r['prompt_messages'] as Obj[] | null | undefined)?.map(goRequestPromptMessage) ?? null,
      tools:
        (r['tools'] as Obj[] | null | undefined)?.map((t) =>
          goStruct({ name: str(t['name']), description: str(t['description']), parameters: t['parameters'] ?? null }),
        ) ?? null,
      ...(choice ? { tool_choice: goStruct({ mode: str(choice['mode']), ...(choice['name'] ? { name: choice['name'] } : {}) }) } : {}),
      stop: r['stop'] ?? null,
      stream: r['stream'] === true,
    });
  }
  if (type === 'tool') {
    return goStruct({
      ...base,
      tool_type: r['tool_type'],
      credential_id: str(r['credential_id']),
      ...(r['credential_type'] ? { credential_type: r['credential_type'] } : {}),
      provider: str(r['provider']),
      tool: str(r['tool']),
      tool_parameters: r['tool_parameters'] ?? null,
    });
  }
  return goStruct({ ...base, ...r, type });
}

/** A PromptMessageContent (struct) as the daemon re-encodes a chunk's list content. */
function goContentItem(c: Obj): GoStruct {
  return goStruct({
    type: c['type'],
    base64_data: str(c['base64_data']),
    url: str(c['url']),
    data: str(c['data']),
    encode_format: str(c['encode_format']),
    format: str(c['format']),
    mime_type: str(c['mime_type']),
    detail: str(c['detail']),
    filename: str(c['filename']),
    ...(c['opaque_body'] !== undefined && c['opaque_body'] !== null ? { opaque_body: c['opaque_body'] } : {}),
  });
}

/** A decimal.Decimal: written as a quoted string. */
const goDecimal = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '0');

/**
 * An LLMResultChunk as the plugin receives it: the inner API's JSON decoded into the daemon's
 * struct (PromptMessage's own UnmarshalJSON for the message) and encoded again, with
 * `prompt_messages: []` added last (LLMResultChunk.MarshalJSON).
 */
function goLlmChunk(c: Obj): GoStruct {
  const delta = (c['delta'] ?? {}) as Obj;
  const m = (delta['message'] ?? {}) as Obj;
  const u = delta['usage'] as Obj | null | undefined;
  const content = Array.isArray(m['content']) ? (m['content'] as Obj[]).map(goContentItem) : m['content'];
  return goStruct({
    model: c['model'],
    system_fingerprint: str(c['system_fingerprint']),
    delta: goStruct({
      index: delta['index'],
      message: goStruct({
        role: m['role'],
        content,
        name: str(m['name']),
        tool_calls: goToolCalls(m['tool_calls']),
        tool_call_id: str(m['tool_call_id']),
        ...(m['opaque_body'] !== undefined && m['opaque_body'] !== null ? { opaque_body: m['opaque_body'] } : {}),
      }),
      usage: u
        ? goStruct({
            prompt_tokens: u['prompt_tokens'] ?? null,
            prompt_unit_price: goDecimal(u['prompt_unit_price']),
            prompt_price_unit: goDecimal(u['prompt_price_unit']),
            prompt_price: goDecimal(u['prompt_price']),
            completion_tokens: u['completion_tokens'] ?? null,
            completion_unit_price: goDecimal(u['completion_unit_price']),
            completion_price_unit: goDecimal(u['completion_price_unit']),
            completion_price: goDecimal(u['completion_price']),
            total_tokens: u['total_tokens'] ?? null,
            total_price: goDecimal(u['total_price']),
            currency: u['currency'] ?? null,
            latency: u['latency'] ?? null,
          })
        : null,
      finish_reason: typeof delta['finish_reason'] === 'string' ? delta['finish_reason'] : null,
    }),
    prompt_messages: [],
  });
}

/** A ToolResponseChunk as the plugin receives it: a struct whose message and meta are maps. */
function goToolChunk(c: Obj): GoStruct {
  return goStruct({ type: c['type'], message: c['message'] ?? null, meta: c['meta'] ?? null });
}

/** The daemon's own checks of an LLMResultChunk (validate tags on model_entities.LLMResultChunk). */
function llmChunkProblem(c: Record<string, unknown>): string | undefined {
  const delta = c['delta'] as Record<string, unknown> | undefined;
  const msg = delta?.['message'] as Record<string, unknown> | undefined;
  if (typeof c['model'] !== 'string' || c['model'] === '') return 'model is required';
  if (typeof delta?.['index'] !== 'number') return 'delta.index is required';
  if (!msg || !['system', 'user', 'assistant', 'tool'].includes(String(msg['role']))) return 'delta.message.role is required';
  if (typeof msg['content'] !== 'string' && !Array.isArray(msg['content'])) return 'delta.message.content is required';
  const u = delta['usage'] as Record<string, unknown> | null | undefined;
  if (u)
    for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens', 'currency', 'latency'])
      if (u[k] === undefined || u[k] === null) return `delta.usage.${k} is required`;
  return undefined;
}

/** Reads length-prefixed frames (magic 0x0f, header length 10, data length LE u32 at 4..8). */
async function* frames(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let buf = Buffer.alloc(0);
  for await (const chunk of body) {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (buf.length < 14) break;
      if (buf[0] !== 0x0f) throw new Error(`magic number mismatch: ${buf[0]}`);
      if (buf.readUInt16LE(2) !== 0x0a) throw new Error(`header length mismatch: ${buf.readUInt16LE(2)}`);
      const len = buf.readUInt32LE(4);
      if (buf.length < 14 + len) break;
      yield buf.subarray(14, 14 + len);
      buf = buf.subarray(14 + len);
    }
  }
  if (buf.length > 0) throw new Error('failed to read data');
}

/** A running plugin process and its sessions. */
export class StdioPluginRuntime {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly sessions = new Map<string, { push(e: SessionEvent): void; userId: string; base: Record<string, unknown>; traceparent: string }>();
  private readonly inflight = new Set<AbortController>();
  readonly relayed: RelayedInvocation[] = [];
  private out = '';
  readonly stderr: string[] = [];

  constructor(private readonly options: StdioPluginOptions) {
    this.child = spawn(options.python, ['-m', 'main'], {
      cwd: options.dir,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', INSTALL_METHOD: 'local', PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (s: string) => this.onStdout(s));
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (s: string) => this.stderr.push(s));
    this.child.stdin.on('error', () => undefined);
  }

  private onStdout(s: string): void {
    this.out += s;
    let i: number;
    while ((i = this.out.indexOf('\n')) >= 0) {
      const line = this.out.slice(0, i).trim();
      this.out = this.out.slice(i + 1);
      if (line === '') continue;
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (msg['event'] !== 'session') continue;
      const session = this.sessions.get(String(msg['session_id']));
      const data = msg['data'] as { type: string; data: Record<string, unknown> };
      if (!session) continue;
      if (data.type === 'stream') session.push({ kind: 'stream', data: data.data });
      else if (data.type === 'error') session.push({ kind: 'error', data: data.data });
      else if (data.type === 'end') {
        session.push({ kind: 'end' });
        this.sessions.delete(String(msg['session_id']));
      } else if (data.type === 'invoke') void this.relay(session, data.data);
    }
  }

  /** One line to the plugin: session_manager.Session's message (a struct; its context and a request's data are maps). */
  private write(base: Record<string, unknown>, event: string, data: unknown): void {
    if (!this.child.stdin.writable) return;
    this.child.stdin.write(`${goJson(goStruct({ ...base, event, data }))}\n`);
  }

  /** Start a session: the request line, then the plugin's session messages as events. */
  invoke(
    userId: string,
    type: string,
    action: string,
    request: Record<string, unknown>,
    push: (e: SessionEvent) => void,
    context: Record<string, unknown> | null = null,
  ): string {
    const id = randomUUID();
    const base = { session_id: id, conversation_id: null, message_id: null, app_id: null, endpoint_id: null, context };
    this.sessions.set(id, { push, userId, base, traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01` });
    this.write(base, 'request', { user_id: userId, type, action, ...request });
    return id;
  }

  /** The client went away: the daemon stops listening to the session (the plugin runs on). */
  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  private async relay(session: { userId: string; base: Record<string, unknown>; traceparent: string }, invoke: Record<string, unknown>): Promise<void> {
    const id = String(invoke['backwards_request_id']);
    const type = String(invoke['type']);
    const respond = (event: string, message: string, data: unknown): void =>
      this.write(session.base, 'backwards_response', goStruct({ backwards_request_id: id, event, message, data }));
    const route = ROUTES[type];
    if (!route) {
      respond('error', `unsupported invoke type: ${type}`, null);
      respond('end', '', null);
      return;
    }
    const body = goJson(goRequest(type, { ...(invoke['request'] as Record<string, unknown>), tenant_id: this.options.tenant, user_id: session.userId }));
    // Go's client: its user agent, gzip accepted, the session's trace context, and a chunked body (no Content-Length).
    const headers = {
      'User-Agent': 'Go-http-client/1.1',
      'Content-Type': 'application/json',
      'X-Inner-Api-Key': this.options.innerApi.key,
      Traceparent: session.traceparent,
      'Accept-Encoding': 'gzip',
    };
    const record: RelayedInvocation = { route, headers, body, startedAt: performance.now(), endedAt: undefined };
    this.relayed.push(record);
    const ac = new AbortController();
    this.inflight.add(ac);
    const [invokeFailed, readFailed] = ERROR_PREFIX[type] ?? [`invoke ${type} failed`];
    const fail = (err: string): void => respond('error', `${invokeFailed}: ${err}`, null);
    const readFail = (err: string): void => respond('error', `${readFailed ?? invokeFailed}: ${err}`, null);
    try {
      const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        const req = httpRequest(new URL(`inner/api/${route}`, `${this.options.innerApi.url}/`), { method: 'POST', headers, signal: ac.signal }, resolve);
        req.on('error', reject);
        req.write(body);
        req.end();
      });
      if (res.statusCode !== 200) {
        const text = await readAll(res);
        fail(`request failed with status code: ${res.statusCode} and respond with: ${text}`);
      } else if (STREAMED.has(route)) {
        for await (const frame of frames(res)) {
          const t = JSON.parse(frame.toString('utf8')) as { data?: Record<string, unknown> | null; error?: string };
          if (t.error) {
            readFail(`request failed: ${t.error}`);
            break;
          }
          if (!t.data) {
            readFail('data is nil');
            break;
          }
          const problem = type === 'llm' ? llmChunkProblem(t.data) : undefined;
          if (problem) {
            readFail(`validate request failed: ${problem}`);
            break;
          }
          respond('response', 'stream', type === 'llm' ? goLlmChunk(t.data) : type === 'tool' ? goToolChunk(t.data) : t.data);
        }
      } else {
        const t = JSON.parse(await readAll(res)) as { data?: unknown; error?: string };
        if (t.error) fail(`request failed: ${t.error}`);
        else respond('response', 'struct', t.data);
      }
    } catch (err) {
      fail((err as Error).message);
    } finally {
      record.endedAt = performance.now();
      this.inflight.delete(ac);
    }
    respond('end', '', null);
  }

  async close(): Promise<void> {
    for (const ac of this.inflight) ac.abort();
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await exited;
  }
}

function readAll(res: AsyncIterable<Buffer>): Promise<string> {
  return (async () => {
    const parts: Buffer[] = [];
    for await (const c of res) parts.push(c);
    return Buffer.concat(parts).toString('utf8');
  })();
}
