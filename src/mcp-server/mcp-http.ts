import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { hasBearer, isLoopback } from '../http/bearer.js';
import { ConfigError } from '../errors.js';
import { fleetMcpServer, InFlight, type FleetDeps } from './fleet-mcp-server.js';

export interface McpHttpOptions {
  readonly host: string;
  readonly port: number;
  /** Required of every client as a bearer token; without one the server listens on loopback only. */
  readonly token: string | undefined;
  readonly maxBodyBytes?: number;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly dispose: () => void;
}

/**
 * `toolwire mcp serve --http`: MCP's streamable HTTP on `/mcp`, one MCP session per client
 * (the `Mcp-Session-Id` header), every request checked for the bearer token.
 */
export class McpHttpServer {
  private http: HttpServer | undefined;
  private readonly sessions = new Map<string, Session>();
  private readonly inFlight = new InFlight();

  constructor(
    private readonly deps: FleetDeps,
    private readonly o: McpHttpOptions,
  ) {
    if (!o.token && !isLoopback(o.host)) throw new ConfigError([`mcp serve: listening on ${o.host} needs a bearer token (TOOLWIRE_HTTP_TOKEN, a secret reference); without one it listens on loopback only`]);
  }

  async start(): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => {
      void this.handle(req, res).catch((err: unknown) => {
        this.deps.log.error({ err }, 'mcp http request failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    this.http = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => resolve());
    });
    const a = server.address() as AddressInfo;
    return { host: a.address, port: a.port };
  }

  private async handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const reply = (status: number, message: string): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
    if (url.pathname !== '/mcp') return reply(404, `no route ${url.pathname}; MCP is served on /mcp`);
    if (this.o.token && !hasBearer(req, this.o.token)) return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    const sessionId = req.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (req.method === 'POST') {
      const body = await this.body(req);
      if (body === undefined) return reply(413, 'request body too large');
      if (known) return known.transport.handleRequest(req, res, body);
      if (sessionId !== undefined) return reply(404, 'unknown MCP session; initialize again');
      if (!isInitializeRequest(body)) return reply(400, 'no session: the first request must be initialize');
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void this.sessions.set(id, { transport, dispose }),
      });
      const { server, dispose } = fleetMcpServer(this.deps, this.inFlight);
      transport.onclose = () => {
        if (transport.sessionId) this.sessions.delete(transport.sessionId);
        dispose();
      };
      await server.connect(transport);
      return transport.handleRequest(req, res, body);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      if (!known) return reply(404, 'unknown MCP session');
      return known.transport.handleRequest(req, res);
    }
    reply(405, 'use POST, GET or DELETE');
  }

  private async body(req: import('node:http').IncomingMessage): Promise<unknown> {
    const max = this.o.maxBodyBytes ?? 4 * 1024 * 1024;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > max) return undefined;
      chunks.push(c);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    for (const s of this.sessions.values()) await s.transport.close().catch(() => undefined);
    this.sessions.clear();
    const h = this.http;
    this.http = undefined;
    if (!h) return;
    h.closeAllConnections();
    await new Promise<void>((resolve) => h.close(() => resolve()));
  }
}
