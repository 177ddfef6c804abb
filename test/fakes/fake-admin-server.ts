import { afterEach, beforeEach } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake broker saw. */
export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

/**
 * A tiny stand-in for the Pulsar admin REST API, keeping tenants, namespaces and retention in
 * memory and answering the way the real broker does (204 on create, 409 when it exists,
 * an empty 200 for a namespace with no retention policy).
 */
export class FakeAdminServer {
  readonly seen: SeenRequest[] = [];
  readonly tenants = new Map<string, unknown>();
  readonly namespaces = new Set<string>();
  readonly retention = new Map<string, unknown>();
  clusters: string[] = ['standalone'];
  /** When set, every request is answered with this instead. */
  override: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  #server: Server | undefined;

  get url(): string {
    const addr = this.#server?.address() as AddressInfo | null | undefined;
    if (!addr) throw new Error('fake admin server is not listening');
    return `http://127.0.0.1:${addr.port}`;
  }

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        this.seen.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body });
        if (this.override?.(req, res)) return;
        this.#answer(req.method ?? '', path, body, res);
      });
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #answer(method: string, path: string, body: string, res: ServerResponse): void {
    const json = (status: number, value?: unknown): void => {
      res.writeHead(status, value === undefined ? {} : { 'content-type': 'application/json' });
      res.end(value === undefined ? '' : JSON.stringify(value));
    };
    let m: RegExpExecArray | null;
    if (method === 'GET' && path === '/admin/v2/clusters') return json(200, this.clusters);
    if (method === 'GET' && path === '/admin/v2/tenants') return json(200, [...this.tenants.keys()]);
    if ((m = /^\/admin\/v2\/tenants\/([^/]+)$/.exec(path)) && method === 'PUT') {
      const t = m[1] ?? '';
      if (this.tenants.has(t)) return json(409, { reason: 'Tenant already exist' });
      this.tenants.set(t, JSON.parse(body) as unknown);
      return json(204);
    }
    if ((m = /^\/admin\/v2\/namespaces\/([^/]+)$/.exec(path)) && method === 'GET') {
      const prefix = `${m[1]}/`;
      return json(
        200,
        [...this.namespaces].filter((n) => n.startsWith(prefix)),
      );
    }
    if ((m = /^\/admin\/v2\/namespaces\/([^/]+)\/([^/]+)$/.exec(path)) && method === 'PUT') {
      if (!this.tenants.has(m[1] ?? '')) return json(404, { reason: 'Tenant does not exist' });
      const ns = `${m[1]}/${m[2]}`;
      if (this.namespaces.has(ns)) return json(409, { reason: 'Namespace already exists' });
      this.namespaces.add(ns);
      return json(204);
    }
    if ((m = /^\/admin\/v2\/namespaces\/([^/]+)\/([^/]+)\/retention$/.exec(path))) {
      const ns = `${m[1]}/${m[2]}`;
      if (!this.namespaces.has(ns)) return json(404, { reason: 'Namespace does not exist' });
      if (method === 'GET') return this.retention.has(ns) ? json(200, this.retention.get(ns)) : json(200);
      if (method === 'POST') {
        this.retention.set(ns, JSON.parse(body) as unknown);
        return json(204);
      }
    }
    return json(404, { reason: `no route for ${method} ${path}` });
  }
}

/**
 * A fake admin API started before each test of the calling `describe` and stopped after it;
 * the returned function gives the current one. `prepare` runs before it starts.
 */
export function fakeAdminServerPerTest(prepare?: (server: FakeAdminServer) => void): () => FakeAdminServer {
  let server: FakeAdminServer | undefined;
  beforeEach(async () => {
    server = new FakeAdminServer();
    prepare?.(server);
    await server.start();
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  return () => {
    if (!server) throw new Error('the fake admin server runs only inside a test');
    return server;
  };
}
