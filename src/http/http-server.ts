import { listen } from '../net/listen.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ConfigStatus } from '../config/config-follower.js';
import type { ToolClient } from '../client/tool-client.js';
import type { PluginFault } from '../plugins/plugin-faults.js';
import type { Transport } from '../transport/transport.js';
import type { Worker } from '../worker/worker.js';
import { hasBearer } from './bearer.js';
import { isLoopback } from '../net/loopback.js';
import { listTools } from './catalog-route.js';
import { invokeTool } from './gateway-route.js';
import { metrics, readiness } from './health-routes.js';
import { json } from './http-io.js';
import { isJsonBody, RequestGuard, type BrowserPolicy } from './request-guard.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import { openApiDocument } from './openapi-route.js';
import { docs } from './docs-route.js';
import { VERSION } from '../version.js';

/** Routes that answer GET only; another method gets 405 with `Allow`. */
const GET_ONLY = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json', '/v1/tools']);

function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('allow', allow);
  json(res, 405, { error: `use ${allow}` });
}

export interface HttpSurfaceOptions {
  readonly host: string;
  readonly port: number;
  readonly worker: Worker;
  readonly transport: Transport;
  readonly client: ToolClient;
  readonly metrics: WorkerMetrics;
  readonly catalog: () => Catalog;
  /** Where descriptors come from and which version is served; absent in tests of the surface alone. */
  readonly config?: () => ConfigStatus;
  /** Faults of the worker's own making that plugins found (readiness shows them). */
  readonly faults?: () => readonly PluginFault[];
  readonly log: Logger;
  readonly maxBodyBytes?: number;
  /** Required as a bearer token on /v1/ routes. Without one, those routes answer only on loopback. */
  readonly token?: string;
  /** Names and pages allowed beyond the listening address's own (default: none). */
  readonly browser?: BrowserPolicy;
}

/**
 * The worker's local HTTP surface: the server's life and the routing. The routes live by
 * purpose: health-routes.ts (probes and metrics), catalog-route.ts (the tool list) and
 * gateway-route.ts (a call made the way an agent makes it, streamed as Server-Sent Events).
 */
export class HttpSurface {
  private server: Server | undefined;
  /** Gateway calls still streaming; close() lets them end before cutting connections. */
  private readonly calls = new Set<Promise<void>>();
  private readonly guard: RequestGuard;

  constructor(private readonly options: HttpSurfaceOptions) {
    this.guard = new RequestGuard(options.host, options.browser ?? { allowedHosts: [], allowedOrigins: [] });
  }

  async start(): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        const status = (err as { status?: number }).status ?? 500;
        if (status === 500) this.options.log.error({ err, url: req.url }, 'http handler failed');
        if (!res.headersSent) json(res, status, { error: status === 500 ? 'internal error' : (err as Error).message });
        else res.end();
      });
    });
    this.server = server;
    return listen(server, this.options.port, this.options.host, (err) => this.options.log.error({ err }, 'http server error'));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    // Liveness says only "ok", and a container probe may send a service name or no Host at all.
    if (req.method === 'GET' && url.pathname === '/healthz') return json(res, 200, { status: 'ok' });
    // Every other route, reads included: a rebound page could read the tool list or /readyz.
    const refusal = this.guard.refusal(req);
    if (refusal) return json(res, 403, { error: refusal });
    if (req.method === 'GET' && url.pathname === '/readyz') return readiness(res, this.options, this.mayReadDetail(req));
    if (req.method === 'GET' && url.pathname === '/metrics') return metrics(res, this.options.metrics);
    // Health, readiness and metrics stay open for probes and scrapers; tools, calls and the
    // document that lists the tools do not.
    const docsPage = url.pathname === '/docs' || url.pathname.startsWith('/docs/');
    if ((url.pathname.startsWith('/v1/') || url.pathname === '/openapi.json' || docsPage) && !this.authorized(req, res)) return;
    if (docsPage) return req.method === 'GET' ? docs(res, url.pathname) : methodNotAllowed(res, 'GET');
    if (req.method === 'GET' && url.pathname === '/openapi.json')
      return openApiDocument(res, this.options.catalog(), this.options.token !== undefined, VERSION);
    if (req.method === 'GET' && url.pathname === '/v1/tools') return listTools(res, this.options.catalog(), this.options.config?.());
    const m = /^\/v1\/tools\/([^/]+)\/invoke$/.exec(url.pathname);
    if (m) {
      if (req.method !== 'POST') return methodNotAllowed(res, 'POST');
      // A form or a text/plain fetch is a request a page may send anywhere without asking.
      if (!isJsonBody(req)) return json(res, 415, { error: 'the body must be JSON, sent as content-type: application/json' });
      let name: string;
      try {
        name = decodeURIComponent(m[1]!);
      } catch {
        return json(res, 400, { error: 'the tool name in the path is not valid percent-encoding' });
      }
      const call = invokeTool(name, req, res, this.options);
      this.calls.add(call);
      return call.finally(() => this.calls.delete(call));
    }
    if (GET_ONLY.has(url.pathname)) return methodNotAllowed(res, 'GET');
    json(res, 404, { error: `no route ${req.method} ${url.pathname}` });
  }

  private authorized(req: IncomingMessage, res: ServerResponse): boolean {
    const { token, host } = this.options;
    if (token) {
      if (hasBearer(req, token)) return true;
      res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'application/json' }).end(JSON.stringify({ error: 'a bearer token is required' }));
      return false;
    }
    if (isLoopback(host)) return true;
    json(res, 401, { error: `this gateway listens on ${host}, beyond loopback, and has no token: set TOOLWIRE_HTTP_TOKEN (a secret reference) to open /v1/` });
    return false;
  }

  /**
   * Readiness problems quote descriptors, which may carry what should not leave the machine:
   * beyond loopback they are shown to bearers of the token only.
   */
  private mayReadDetail(req: IncomingMessage): boolean {
    return isLoopback(this.options.host) || (this.options.token !== undefined && hasBearer(req, this.options.token));
  }

  /** Stop accepting, give running gateway calls `graceMs` to deliver their answers, then cut. */
  async close(graceMs = 2000): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => s.close(() => resolve()));
    s.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.calls]), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    s.closeAllConnections();
    await closed;
  }
}
