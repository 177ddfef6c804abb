import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { daemonErrorEnvelope, daemonErrorText, envelope, goJson, goStruct, pluginErrorText, type WireMessage } from './dify-wire.js';
import { StdioPluginRuntime, type InnerApi, type SessionEvent } from './stdio-plugin-runtime.js';
import { jsonText } from '../../src/plain-object.js';

/** One request as the fake received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Node's lowercased header names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body bytes as text, exactly as sent. */
  readonly body: string;
  /** Set when the client went away before the response ended. */
  clientClosedEarly: boolean;
}

/** What a scripted tool can do with its response stream. */
export interface StreamControl {
  readonly request: RecordedRequest;
  readonly body: Record<string, unknown>;
  /** Which call of this tool this is, from 1. */
  readonly attempt: number;
  /** One SSE event: `data: <json>\n\n`. */
  event(json: string): Promise<void>;
  message(m: WireMessage): Promise<void>;
  /** Raw bytes, for split or malformed framing. */
  raw(bytes: string | Buffer): Promise<void>;
  /** Resolves when the client disconnects. */
  readonly closed: Promise<void>;
}

/** A scripted tool: stream what it likes, or answer with an HTTP error (`{status, body}`). */
export type ToolScript = (c: StreamControl) => Promise<void | { status: number; body: string }>;

export interface FakeDifyDaemonOptions {
  readonly key?: string;
  readonly tenant?: string;
  /** Plugins installed for the tenant. */
  readonly plugins?: readonly string[];
  /**
   * Strategy plugins run for real over stdio (by plugin id: the Python and the plugin's
   * directory), their backwards invocations relayed to `innerApi` as the daemon does.
   */
  readonly agentPlugins?: Readonly<Record<string, { readonly python: string; readonly dir: string }>>;
  /** DIFY_INNER_API_URL and DIFY_INNER_API_KEY of this daemon. */
  readonly innerApi?: InnerApi;
}

export interface FakeDifyDaemon {
  readonly url: string;
  readonly key: string;
  readonly tenant: string;
  readonly requests: RecordedRequest[];
  /** The running strategy plugins, by plugin id (each records what it relayed). */
  readonly runtimes: ReadonlyMap<string, StdioPluginRuntime>;
  /** Script the behaviour of a tool (by the `tool` of the request's data). */
  script(tool: string, s: ToolScript): void;
  close(): Promise<void>;
}

/** entities.Response (a struct: code, message, data) around the daemon's own error. */
function errorBody(code: number, errorType: string, message: string): string {
  return goJson(goStruct({ code, message: daemonErrorText(errorType, message), data: null }));
}

/** The SSE headers the daemon sends (gin: only the content type; sent with the first event, not before). */
const SSE_HEADERS = { 'Content-Type': 'text/event-stream' };

/** The validator's text for the agent strategy fields a request lacks (one line per field, as the real daemon answers). */
function agentStrategyRequired(data: Record<string, unknown> | undefined): string {
  const prefix =
    "Key: 'InvokePluginRequest[github.com/langgenius/dify-plugin-daemon/pkg/entities/requests.RequestInvokeAgentStrategy].Data.InvokeAgentStrategySchema.";
  const fields = [
    ['AgentStrategyProvider', 'agent_strategy_provider'],
    ['AgentStrategy', 'agent_strategy'],
  ] as const;
  return fields
    .filter(([, key]) => typeof data?.[key] !== 'string' || data[key] === '')
    .map(([field]) => `${prefix}${field}' Error:Field validation for '${field}' failed on the 'required' tag`)
    .join('\n');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function write(res: ServerResponse, bytes: string | Buffer): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    // Waiting for each write keeps a large stream from piling up in memory.
    if (res.write(bytes)) resolve();
    else {
      const done = (): void => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.once('drain', done);
      res.once('close', done);
    }
  });
}

/**
 * A stand-in for the Dify plugin daemon's dispatch API on 127.0.0.1: the real headers check
 * (key, plugin id, content type), the real error envelopes, and SSE streams written byte for
 * byte like the daemon's. Tools are scripted per test.
 */
export async function startFakeDifyDaemon(options: FakeDifyDaemonOptions = {}): Promise<FakeDifyDaemon> {
  const key = options.key ?? 'daemon-key-0123456789abcdef';
  const tenant = options.tenant ?? '7a2f1c3e-0000-4000-8000-000000000001';
  const plugins = new Set([...(options.plugins ?? ['langgenius/search']), ...Object.keys(options.agentPlugins ?? {})]);
  const runtimes = new Map<string, StdioPluginRuntime>();
  for (const [id, p] of Object.entries(options.agentPlugins ?? {})) {
    if (!options.innerApi) throw new Error('agentPlugins need innerApi');
    runtimes.set(id, new StdioPluginRuntime({ python: p.python, dir: p.dir, tenant, innerApi: options.innerApi }));
  }
  const requests: RecordedRequest[] = [];
  const scripts = new Map<string, ToolScript>();
  const attempts = new Map<string, number>();

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const record: RecordedRequest = { method: req.method ?? '', path, headers: { ...req.headers }, body, clientClosedEarly: false };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.clientClosedEarly = true;
      });

      const m = /^\/plugin\/([^/]+)\/dispatch\/(tool\/invoke|tool\/get_runtime_parameters|tool\/validate_credentials|agent_strategy\/invoke)$/.exec(path);
      if (req.method !== 'POST' || !m) {
        // The router's own answer: a string code, not the plugin envelope.
        send(res, 404, goJson({ code: 'not_found', message: 'route not found' }));
        return;
      }
      if (req.headers['x-api-key'] !== key) {
        send(res, 401, errorBody(-401, 'PluginDaemonUnauthorizedError', 'unauthorized'));
        return;
      }
      const pluginId = req.headers['x-plugin-id'];
      if (typeof pluginId !== 'string' || pluginId === '') {
        send(res, 400, errorBody(-400, 'PluginDaemonBadRequestError', 'plugin_id is required'));
        return;
      }
      if (decodeURIComponent(m[1] ?? '') !== tenant || !plugins.has(pluginId)) {
        send(res, 404, errorBody(-404, 'PluginNotFoundError', 'plugin not found'));
        return;
      }
      // Without exactly this content type the daemon does not bind the body.
      let parsed: Record<string, unknown> | undefined;
      if (req.headers['content-type'] === 'application/json') {
        try {
          parsed = JSON.parse(body) as Record<string, unknown>;
        } catch {
          parsed = undefined;
        }
      }
      const data = parsed?.['data'] as Record<string, unknown> | undefined;
      if (m[2] === 'agent_strategy/invoke') {
        const runtime = runtimes.get(pluginId);
        const missing = agentStrategyRequired(data);
        if (missing !== '' || !parsed || !data) {
          send(res, 400, errorBody(-400, 'PluginDaemonBadRequestError', missing));
          return;
        }
        if (!runtime) {
          send(res, 500, errorBody(-500, 'PluginDaemonInternalServerError', 'failed to get plugin runtime'));
          return;
        }
        await streamStrategy(runtime, parsed, data, res);
        return;
      }
      if (!parsed || typeof parsed['user_id'] !== 'string' || !data || typeof data['provider'] !== 'string') {
        send(
          res,
          400,
          errorBody(-400, 'PluginDaemonBadRequestError', "Key: 'data.provider' Error:Field validation for 'provider' failed on the 'required' tag"),
        );
        return;
      }

      const tool = typeof data['tool'] === 'string' ? data['tool'] : '';
      const action = m[2] ?? '';
      const scriptKey = action === 'tool/invoke' ? tool : `${action}:${tool}`;
      const script = scripts.get(scriptKey);
      const attempt = (attempts.get(scriptKey) ?? 0) + 1;
      attempts.set(scriptKey, attempt);

      let headersSent = false;
      const startStream = (): void => {
        if (headersSent) return;
        headersSent = true;
        res.writeHead(200, SSE_HEADERS);
        res.flushHeaders();
      };
      const closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
      const control: StreamControl = {
        request: record,
        body: parsed,
        attempt,
        closed,
        async event(jsonText) {
          startStream();
          await write(res, `data: ${jsonText}\n\n`);
        },
        async message(msg) {
          startStream();
          await write(res, `data: ${envelope(msg)}\n\n`);
        },
        async raw(bytes) {
          startStream();
          await write(res, bytes);
        },
      };

      if (!script) {
        // What the SDK answers for a tool the provider does not have, inside PluginInvokeError.
        startStream();
        const inner = pluginErrorText('ValueError', `Tool \`${tool}\` not found for provider \`${String(data['provider'])}\``, {
          traceback: 'Traceback (most recent call last):\n  ...',
        });
        await write(res, `data: ${goJson(goStruct({ code: -500, message: daemonErrorText('PluginInvokeError', inner), data: null }))}\n\n`);
        res.end();
        return;
      }
      const answer = await script(control);
      if (answer && !headersSent) send(res, answer.status, answer.body);
      else if (!res.destroyed) {
        startStream();
        res.end();
      }
    })().catch((err: unknown) => {
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    tenant,
    requests,
    runtimes,
    script(tool, s) {
      scripts.set(tool, s);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const r of runtimes.values()) await r.close();
    },
  };
}

/**
 * `agent_strategy/invoke` (internal/service/invoke_agent.go, base_sse.go,
 * io_tunnel/agent_service.go at bdb5642a): the session's stream messages as the same SSE
 * envelopes as tool/invoke; a plugin error as the -500 PluginInvokeError envelope, which ends
 * the stream; the end message closes it. The status and headers go out with the first event
 * (gin holds them until the first write). The client going away ends the daemon's listening,
 * not the plugin's work.
 */
async function streamStrategy(runtime: StdioPluginRuntime, body: Record<string, unknown>, data: Record<string, unknown>, res: ServerResponse): Promise<void> {
  res.writeHead(200, SSE_HEADERS);
  const queue: SessionEvent[] = [];
  const files = new Map<string, Buffer[]>();
  let wake: (() => void) | undefined;
  const sessionId = runtime.invoke(
    String(body['user_id']),
    'agent_strategy',
    'invoke_agent_strategy',
    {
      agent_strategy_provider: data['agent_strategy_provider'],
      agent_strategy: data['agent_strategy'],
      agent_strategy_params: data['agent_strategy_params'] ?? null,
    },
    (e) => {
      queue.push(e);
      wake?.();
    },
    // A request without `context` reaches the plugin as `"context":null` (a nil map).
    (body['context'] as Record<string, unknown> | undefined) ?? null,
  );
  let gone = false;
  res.on('close', () => {
    gone = true;
    runtime.forget(sessionId);
    wake?.();
  });
  for (;;) {
    if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    if (gone) return;
    const e = queue.shift();
    if (!e) continue;
    if (e.kind === 'end') break;
    if (e.kind === 'error') {
      // base_sse.go: the first error is written and the stream ends there.
      await write(res, `data: ${goJson(goStruct({ code: -500, message: daemonErrorText('PluginInvokeError', goJson(e.data)), data: null }))}\n\n`);
      runtime.forget(sessionId);
      break;
    }
    const msg = e.data as { type: string; message: Record<string, unknown>; meta?: Record<string, unknown> | null };
    if (msg.type === 'blob_chunk') {
      // The daemon merges a strategy's blob chunks itself and sends one blob (agent_service.go).
      const id = String(msg.message['id']);
      if (msg.message['end'] === true) {
        await write(
          res,
          `data: ${envelope({ type: 'blob', message: { blob: Buffer.concat(files.get(id) ?? []).toString('base64') }, meta: msg.meta ?? null })}\n\n`,
        );
        files.delete(id);
        continue;
      }
      const piece = Buffer.from(jsonText(msg.message['blob']), 'base64');
      const parts = files.get(id) ?? [];
      const size = parts.reduce((n, b) => n + b.length, 0);
      const problem = size > 15 * 1024 * 1024 ? 'file is too large' : piece.length > 8192 ? 'single file chunk is too large' : undefined;
      if (problem) {
        // agent_service.go writes these as stream errors: base_sse.go wraps them as PluginInvokeError.
        await write(res, `data: ${daemonErrorEnvelope(-500, 'PluginInvokeError', problem)}\n\n`);
        break;
      }
      files.set(id, [...parts, piece]);
      continue;
    }
    await write(res, `data: ${envelope({ type: msg.type, message: msg.message, meta: msg.meta ?? null })}\n\n`);
  }
  res.end();
}

/** The daemon's HTTP error bodies, for scripts that answer before streaming. */
export const httpError = {
  unauthorized: (): { status: number; body: string } => ({ status: 401, body: errorBody(-401, 'PluginDaemonUnauthorizedError', 'unauthorized') }),
  badRequest: (message: string): { status: number; body: string } => ({ status: 400, body: errorBody(-400, 'PluginDaemonBadRequestError', message) }),
  notFound: (): { status: number; body: string } => ({ status: 404, body: errorBody(-404, 'PluginNotFoundError', 'plugin not found') }),
  internal: (message = 'failed to get plugin runtime'): { status: number; body: string } => ({
    status: 500,
    body: errorBody(-500, 'PluginDaemonInternalServerError', message),
  }),
  /** The flat form dify-agent expects. */
  flat: (status: number, errorType: string, message: string): { status: number; body: string } => ({
    status,
    body: goJson({ error_type: errorType, message }),
  }),
};
