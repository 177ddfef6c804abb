import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { daemonErrorText, envelope, goJson, type WireMessage } from './dify-wire.js';

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
}

export interface FakeDifyDaemon {
  readonly url: string;
  readonly key: string;
  readonly tenant: string;
  readonly requests: RecordedRequest[];
  /** Script the behaviour of a tool (by the `tool` of the request's data). */
  script(tool: string, s: ToolScript): void;
  close(): Promise<void>;
}

function errorBody(code: number, errorType: string, message: string): string {
  return goJson({ code, message: daemonErrorText(errorType, message), data: null });
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
  const plugins = new Set(options.plugins ?? ['langgenius/search']);
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

      const m = /^\/plugin\/([^/]+)\/dispatch\/(tool\/invoke|tool\/get_runtime_parameters|tool\/validate_credentials)$/.exec(path);
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
      if (!parsed || typeof parsed['user_id'] !== 'string' || !data || typeof data['provider'] !== 'string') {
        send(res, 400, errorBody(-400, 'PluginDaemonBadRequestError', "Key: 'data.provider' Error:Field validation for 'provider' failed on the 'required' tag"));
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
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
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
        const inner = daemonErrorText('ValueError', `Tool \`${tool}\` not found for provider \`${String(data['provider'])}\``, { traceback: 'Traceback (most recent call last):\n  ...' });
        await write(res, `data: ${goJson({ code: -500, message: daemonErrorText('PluginInvokeError', inner), data: null })}\n\n`);
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
    script(tool, s) {
      scripts.set(tool, s);
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The daemon's HTTP error bodies, for scripts that answer before streaming. */
export const httpError = {
  unauthorized: (): { status: number; body: string } => ({ status: 401, body: errorBody(-401, 'PluginDaemonUnauthorizedError', 'unauthorized') }),
  badRequest: (message: string): { status: number; body: string } => ({ status: 400, body: errorBody(-400, 'PluginDaemonBadRequestError', message) }),
  notFound: (): { status: number; body: string } => ({ status: 404, body: errorBody(-404, 'PluginNotFoundError', 'plugin not found') }),
  internal: (message = 'failed to get plugin runtime'): { status: number; body: string } => ({ status: 500, body: errorBody(-500, 'PluginDaemonInternalServerError', message) }),
  /** The flat form dify-agent expects. */
  flat: (status: number, errorType: string, message: string): { status: number; body: string } => ({ status, body: goJson({ error_type: errorType, message }) }),
};
