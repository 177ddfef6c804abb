import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ConfigStatus } from '../config/config-follower.js';
import type { ToolClient } from '../client/tool-client.js';
import { toolInputSchema } from '../tools/json-schema.js';
import type { Transport } from '../transport/transport.js';
import type { Worker } from '../worker/worker.js';
import { hasBearer, isLoopback } from './bearer.js';
import { metricsText } from './metrics.js';

/** The error type of the gateway's own last event when the call could not be made through the broker (not a worker's answer). */
export const GATEWAY_ERROR = 'gateway-error';

export interface HttpSurfaceOptions {
  readonly host: string;
  readonly port: number;
  readonly worker: Worker;
  readonly transport: Transport;
  readonly client: ToolClient;
  readonly catalog: () => Catalog;
  /** Where descriptors come from and which version is served; absent in tests of the surface alone. */
  readonly config?: () => ConfigStatus;
  readonly log: Logger;
  readonly maxBodyBytes?: number;
  /** Required as a bearer token on /v1/ routes. Without one, those routes answer only on loopback. */
  readonly token?: string;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) throw Object.assign(new Error(`request body exceeds ${max} bytes`), { status: 413 });
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The worker's local HTTP surface: health, readiness, metrics, the tool list with each
 * tool's model-facing schema, and a gateway that calls a tool the way an agent does (through
 * the transport) and streams its observations as Server-Sent Events.
 */
export class HttpSurface {
  private server: Server | undefined;
  /** Gateway calls still streaming; close() lets them end before cutting connections. */
  private readonly calls = new Set<Promise<void>>();

  constructor(private readonly o: HttpSurfaceOptions) {}

  async start(): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        const status = (err as { status?: number }).status ?? 500;
        if (status === 500) this.o.log.error({ err, url: req.url }, 'http handler failed');
        if (!res.headersSent) json(res, status, { error: status === 500 ? 'internal error' : (err as Error).message });
        else res.end();
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => resolve());
    });
    const a = server.address() as AddressInfo;
    return { host: a.address, port: a.port };
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const { worker, transport } = this.o;
    if (req.method === 'GET' && url.pathname === '/healthz') return json(res, 200, { status: 'ok' });
    if (req.method === 'GET' && url.pathname === '/readyz') {
      const config = this.o.config?.();
      const abandoned = worker.abandoned();
      // Until a valid catalog has been read (a config service with none yet) there is nothing
      // to serve; a service blocked by calls running past their timeout serves nothing either.
      const ready = worker.state === 'running' && transport.connected && (!config || config.version !== undefined) && !abandoned.some((a) => a.blocked);
      return json(res, ready ? 200 : 503, {
        status: ready ? 'ready' : 'not-ready',
        worker: worker.state,
        transport: transport.connected ? 'connected' : 'disconnected',
        ...(config ? { config } : {}),
        ...(abandoned.length > 0 ? { abandoned } : {}),
      });
    }
    if (req.method === 'GET' && url.pathname === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      return void res.end(metricsText(worker.stats(), transport.connected, this.o.config?.()));
    }
    // Health, readiness and metrics stay open for probes and scrapers; tools and calls do not.
    if (url.pathname.startsWith('/v1/') && !this.authorized(req, res)) return;
    if (req.method === 'GET' && url.pathname === '/v1/tools') {
      const tools = [...this.o.catalog().tools.values()].map((t) => ({
        name: t.name,
        description: t.description,
        service: t.service,
        input_schema: toolInputSchema(t.parameters),
      }));
      const config = this.o.config?.();
      return json(res, 200, { tools, ...(config ? { config: { version: config.version, rejected: config.rejected } } : {}) });
    }
    const m = /^\/v1\/tools\/([^/]+)\/invoke$/.exec(url.pathname);
    if (m) {
      if (req.method !== 'POST') return json(res, 405, { error: 'use POST' });
      let name: string;
      try {
        name = decodeURIComponent(m[1]!);
      } catch {
        return json(res, 400, { error: 'the tool name in the path is not valid percent-encoding' });
      }
      const call = this.invoke(name, req, res);
      this.calls.add(call);
      return call.finally(() => this.calls.delete(call));
    }
    json(res, 404, { error: `no route ${req.method} ${url.pathname}` });
  }

  private authorized(req: IncomingMessage, res: ServerResponse): boolean {
    const { token, host } = this.o;
    if (token) {
      if (hasBearer(req, token)) return true;
      res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'application/json' }).end(JSON.stringify({ error: 'a bearer token is required' }));
      return false;
    }
    if (isLoopback(host)) return true;
    json(res, 401, { error: `this gateway listens on ${host}, beyond loopback, and has no token: set TOOLWIRE_HTTP_TOKEN (a secret reference) to open /v1/` });
    return false;
  }

  private async invoke(name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const catalog = this.o.catalog();
    const tool = catalog.tools.get(name);
    const service = tool ? catalog.services.get(tool.service) : undefined;
    if (!tool || !service) return json(res, 404, { error: `there is no tool named ${JSON.stringify(name)}` });
    const text = await readBody(req, this.o.maxBodyBytes ?? 1024 * 1024);
    let body: { arguments?: unknown; stream?: unknown; user?: unknown };
    try {
      body = text.trim() === '' ? {} : (JSON.parse(text) as typeof body);
    } catch {
      return json(res, 400, { error: 'body must be JSON: {"arguments": {...}, "stream": false}' });
    }
    const args = body.arguments ?? {};
    if (args === null || typeof args !== 'object' || Array.isArray(args)) return json(res, 400, { error: '"arguments" must be an object' });
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    try {
      for await (const r of this.o.client.stream({
        requestQueue: service.requestQueue,
        responseQueue: service.responseQueue,
        config: tool.config as Record<string, unknown>,
        arguments: args as Record<string, unknown>,
        ...(typeof body.user === 'string' ? { user: body.user } : {}),
        stream: body.stream === true,
        tool: tool.name,
        signal: abort.signal,
      })) {
        res.write(`data: ${JSON.stringify({ error: r.error, response: r.response, end_of_stream: r.endOfStream })}\n\n`);
      }
    } catch (err) {
      if (!abort.signal.aborted) {
        res.write(`data: ${JSON.stringify({ error: { type: GATEWAY_ERROR, message: (err as Error).message }, response: '', end_of_stream: true })}\n\n`);
      }
    }
    res.end();
  }

  /** Stop accepting, give running gateway calls `graceMs` to deliver their answers, then cut. */
  async close(graceMs = 2000): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    s.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.calls]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    s.closeAllConnections();
    await closed;
  }
}
