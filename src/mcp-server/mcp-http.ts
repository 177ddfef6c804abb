import { listen } from '../net/listen.js';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { hasBearer } from '../http/bearer.js';
import { isLoopback } from '../net/loopback.js';
import { isJsonBody, RequestGuard, type BrowserPolicy } from '../http/request-guard.js';
import { ConfigError } from '../errors.js';
import { fleetMcpServer, InFlight, type FleetDeps } from './fleet-mcp-server.js';
import { DEFAULT_SESSION_LIMITS, ClientSession, ClientSessions, type SessionLimits, type SessionRefusal } from './client-sessions.js';
import { clientKey } from './client-key.js';

export interface McpHttpOptions extends Partial<SessionLimits> {
  readonly host: string;
  readonly port: number;
  /** Required of every client as a bearer token; without one the server listens on loopback only. */
  readonly token: string | undefined;
  /** Names and pages allowed beyond the listening address's own (default: none). */
  readonly browser?: BrowserPolicy;
  readonly maxBodyBytes?: number;
}

/** What a refused initialize is told: which cap, and that every session in the way is busy. */
function refusalText(refused: SessionRefusal, client: string): string {
  const what =
    refused.full === 'client'
      ? `this client (${client}) has ${refused.open} MCP sessions open, the most one client keeps (TOOLWIRE_MCP_MAX_SESSIONS_PER_CLIENT)`
      : `${refused.open} MCP sessions are open, the most this server keeps (TOOLWIRE_MCP_MAX_SESSIONS)`;
  return `${what}, each with a request or stream open; close one (DELETE) or try again in ${refused.retryAfterSeconds} s`;
}

/** The ids of the requests (not notifications) in a POST body, one message or a batch. */
function requestIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.flatMap((message) => {
    const r = message as { method?: unknown; id?: unknown } | null;
    return r && typeof r.method === 'string' && (typeof r.id === 'string' || typeof r.id === 'number') ? [r.id] : [];
  });
}

/**
 * `toolwire mcp serve --http`: MCP's streamable HTTP on `/mcp`, one MCP session per client
 * (the `Mcp-Session-Id` header). Every request is checked for its Host and Origin (a web
 * page may not drive it), a JSON body and the bearer token; sessions are bounded
 * (client-sessions.ts); a call whose client goes away is cancelled.
 */
export class McpHttpServer {
  private http: HttpServer | undefined;
  private readonly sessions: ClientSessions;
  private readonly inFlight = new InFlight();
  private readonly guard: RequestGuard;

  constructor(
    private readonly deps: FleetDeps,
    private readonly options: McpHttpOptions,
  ) {
    if (!options.token && !isLoopback(options.host))
      throw new ConfigError([
        `mcp serve: listening on ${options.host} needs a bearer token (TOOLWIRE_HTTP_TOKEN, a secret reference); without one it listens on loopback only`,
      ]);
    this.guard = new RequestGuard(options.host, options.browser ?? { allowedHosts: [], allowedOrigins: [] });
    this.sessions = new ClientSessions({
      maxSessions: options.maxSessions ?? DEFAULT_SESSION_LIMITS.maxSessions,
      maxSessionsPerClient: options.maxSessionsPerClient ?? DEFAULT_SESSION_LIMITS.maxSessionsPerClient,
      idleMs: options.idleMs ?? DEFAULT_SESSION_LIMITS.idleMs,
    });
  }

  /** Sessions open now (initializing ones included). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Tool calls running now, over every session. */
  get callsInFlight(): number {
    return this.inFlight.count;
  }

  async start(): Promise<{ host: string; port: number }> {
    const server = createServer((req, res) => {
      void this.handle(req, res).catch((err: unknown) => {
        this.deps.log.error({ err }, 'mcp http request failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    this.http = server;
    return listen(server, this.options.port, this.options.host, (err) => this.deps.log.error({ err }, 'mcp http server error'));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const reply = (status: number, message: string, headers: Record<string, string> = {}): void =>
      void res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
    const refusal = this.guard.refusal(req);
    if (refusal) return reply(403, refusal);
    if (url.pathname !== '/mcp') return reply(404, `no route ${url.pathname}; MCP is served on /mcp`);
    if (this.options.token && !hasBearer(req, this.options.token)) return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    const sessionId = req.headers['mcp-session-id'];
    // Looked up after the body is in: an idle session may have given way to a new one meanwhile.
    const session = (): ClientSession | undefined => (typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined);
    if (req.method === 'POST') {
      if (!isJsonBody(req)) return reply(415, 'the body must be JSON, sent as content-type: application/json');
      const body = await this.body(req);
      if (body === undefined) return reply(413, 'request body too large');
      const known = session();
      if (known) return this.post(known, req, res, body);
      if (sessionId !== undefined) return reply(404, 'unknown MCP session; initialize again');
      if (!isInitializeRequest(body)) return reply(400, 'no session: the first request must be initialize');
      const client = clientKey(req.socket.remoteAddress);
      const refused = this.sessions.admit(client);
      if (refused) return reply(503, refusalText(refused, client), { 'retry-after': String(refused.retryAfterSeconds) });
      return this.initialize(req, res, body, client);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      const known = session();
      if (!known) return reply(404, 'unknown MCP session');
      known.hold(res);
      return known.transport.handleRequest(req, res);
    }
    reply(405, 'use POST, GET or DELETE');
  }

  /** A new session for `client`, admitted already (it counts until initialized or abandoned). */
  private async initialize(req: IncomingMessage, res: ServerResponse, body: unknown, client: string): Promise<void> {
    const { server, dispose } = fleetMcpServer(this.deps, this.inFlight);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => this.sessions.initialized(id, session),
    });
    const session = new ClientSession(transport, () => server.close(), this.sessions.limits.idleMs, client);
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.forget(transport.sessionId);
      dispose();
    };
    try {
      await server.connect(transport);
      await this.post(session, req, res, body);
    } finally {
      // Refused by the SDK (a malformed initialize) or failed: no session, nothing may stay, and it takes no room.
      if (transport.sessionId === undefined) {
        this.sessions.abandoned(client);
        session.stop();
        await server.close();
      }
    }
  }

  /**
   * Hands a POST to the session. The answers go back on this response, and without an event
   * store nothing can resume them: when the client goes before they are written, its calls
   * are cancelled (as if it had sent notifications/cancelled), so the fleet stops the work
   * and the in-flight slot is free at once, not at the call's timeout.
   */
  private async post(session: ClientSession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    session.hold(res);
    const ids = requestIds(body);
    if (ids.length > 0) {
      res.once('close', () => {
        if (res.writableFinished) return;
        for (const requestId of ids) {
          const cancel: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the client went away' } };
          session.transport.onmessage?.(cancel);
        }
      });
    }
    await session.transport.handleRequest(req, res, body);
  }

  private async body(req: IncomingMessage): Promise<unknown> {
    const max = this.options.maxBodyBytes ?? 4 * 1024 * 1024;
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
    await this.sessions.closeAll();
    const h = this.http;
    this.http = undefined;
    if (!h) return;
    h.closeAllConnections();
    await new Promise<void>((resolve) => h.close(() => resolve()));
  }
}
