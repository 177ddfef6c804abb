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
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';

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
};
/** Routes the daemon reads as a stream (StreamResponse); the rest are one JSON body (Request). */
const STREAMED = new Set(['invoke/llm', 'invoke/llm/structured-output', 'invoke/tool', 'invoke/tts', 'invoke/app']);

/** Go's encoding of a PromptMessage (pkg/entities/model_entities/llm.go): declared field order, nil slices as null. */
function goPromptMessage(m: Record<string, unknown>): Record<string, unknown> {
  const calls = Array.isArray(m['tool_calls']) && m['tool_calls'].length > 0 ? m['tool_calls'] : null;
  return {
    role: m['role'],
    content: m['content'],
    name: m['name'] ?? '',
    tool_calls:
      calls?.map((c: Record<string, unknown>) => ({
        id: c['id'] ?? '',
        type: c['type'] ?? '',
        function: { name: (c['function'] as Record<string, unknown>)['name'] ?? '', arguments: (c['function'] as Record<string, unknown>)['arguments'] ?? '' },
      })) ?? null,
    tool_call_id: m['tool_call_id'] ?? '',
  };
}

/** The daemon's Go struct for a request, in declared field order (dify_invocation/types.go). */
function goRequest(type: string, r: Record<string, unknown>): Record<string, unknown> {
  const base = { tenant_id: r['tenant_id'], user_id: r['user_id'], type };
  if (type === 'llm') {
    return {
      ...base,
      provider: r['provider'],
      model: r['model'],
      mode: r['mode'],
      completion_params: r['completion_params'] ?? null,
      prompt_messages: (r['prompt_messages'] as Record<string, unknown>[] | null)?.map(goPromptMessage) ?? null,
      tools:
        (r['tools'] as Record<string, unknown>[] | null)?.map((t) => ({
          name: t['name'],
          description: t['description'] ?? '',
          parameters: t['parameters'] ?? null,
        })) ?? null,
      ...(r['tool_choice'] ? { tool_choice: r['tool_choice'] } : {}),
      stop: r['stop'] ?? null,
      stream: r['stream'] === true,
    };
  }
  if (type === 'tool') {
    return {
      ...base,
      tool_type: r['tool_type'],
      credential_id: r['credential_id'] ?? '',
      ...(r['credential_type'] ? { credential_type: r['credential_type'] } : {}),
      provider: r['provider'],
      tool: r['tool'],
      tool_parameters: r['tool_parameters'] ?? null,
    };
  }
  return { ...base, ...r };
}

/** Go-keyed JSON in struct order (not sorted): JSON.stringify of objects built in that order, HTML escaped. */
function goStructJson(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
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
  private readonly sessions = new Map<string, { push(e: SessionEvent): void; userId: string; base: Record<string, unknown> }>();
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

  private write(base: Record<string, unknown>, event: string, data: unknown): void {
    if (!this.child.stdin.writable) return;
    this.child.stdin.write(`${goStructJson({ ...base, event, data })}\n`);
  }

  /** Start a session: the request line, then the plugin's session messages as events. */
  invoke(
    userId: string,
    type: string,
    action: string,
    request: Record<string, unknown>,
    push: (e: SessionEvent) => void,
    context: Record<string, unknown> = {},
  ): string {
    const id = randomUUID();
    const base = { session_id: id, conversation_id: null, message_id: null, app_id: null, endpoint_id: null, context };
    this.sessions.set(id, { push, userId, base });
    this.write(base, 'request', { user_id: userId, type, action, ...request });
    return id;
  }

  /** The client went away: the daemon stops listening to the session (the plugin runs on). */
  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  private async relay(session: { userId: string; base: Record<string, unknown> }, invoke: Record<string, unknown>): Promise<void> {
    const id = String(invoke['backwards_request_id']);
    const type = String(invoke['type']);
    const respond = (event: string, message: string, data: unknown): void =>
      this.write(session.base, 'backwards_response', { backwards_request_id: id, event, message, data });
    const route = ROUTES[type];
    if (!route) {
      respond('error', `unsupported invoke type: ${type}`, null);
      respond('end', '', null);
      return;
    }
    const body = goStructJson(goRequest(type, { ...(invoke['request'] as Record<string, unknown>), tenant_id: this.options.tenant, user_id: session.userId }));
    const headers = { 'Content-Type': 'application/json', 'X-Inner-Api-Key': this.options.innerApi.key };
    const record: RelayedInvocation = { route, headers, body, startedAt: performance.now(), endedAt: undefined };
    this.relayed.push(record);
    const ac = new AbortController();
    this.inflight.add(ac);
    const fail = (what: string, err: string): void => respond('error', `invoke ${what} failed: ${err}`, null);
    const what = type === 'llm' ? 'llm model' : type;
    try {
      const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        const req = httpRequest(new URL(`inner/api/${route}`, `${this.options.innerApi.url}/`), { method: 'POST', headers, signal: ac.signal }, resolve);
        req.on('error', reject);
        req.end(body);
      });
      if (res.statusCode !== 200) {
        const text = await readAll(res);
        fail(what, `request failed with status code: ${res.statusCode} and respond with: ${text}`);
      } else if (STREAMED.has(route)) {
        for await (const frame of frames(res)) {
          const t = JSON.parse(frame.toString('utf8')) as { data?: Record<string, unknown> | null; error?: string };
          if (t.error) {
            respond('error', `read ${what} failed: request failed: ${t.error}`, null);
            break;
          }
          if (!t.data) {
            respond('error', `read ${what} failed: data is nil`, null);
            break;
          }
          const problem = type === 'llm' ? llmChunkProblem(t.data) : undefined;
          if (problem) {
            respond('error', `read ${what} failed: validate request failed: ${problem}`, null);
            break;
          }
          respond('response', 'stream', t.data);
        }
      } else {
        const t = JSON.parse(await readAll(res)) as { data?: unknown; error?: string };
        if (t.error) fail(what, `request failed: ${t.error}`);
        else respond('response', 'struct', t.data);
      }
    } catch (err) {
      fail(what, (err as Error).message);
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
