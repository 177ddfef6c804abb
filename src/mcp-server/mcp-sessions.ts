import type { ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface SessionLimits {
  /** Sessions at once, initializing ones included. */
  readonly maxSessions: number;
  /** A session with nothing open (no request, no stream) this long is closed. */
  readonly idleMs: number;
}

/** A local server's clients are few; an abandoned session goes within a quarter hour. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = { maxSessions: 1000, idleMs: 15 * 60_000 };

/** One client's MCP session: its transport, how to close it, and what it has open now. */
export class McpSession {
  /** Requests and streams whose HTTP response is still open. */
  private open = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Set by `stop`: a response that closes afterwards (the DELETE's own) must not arm the clock again. */
  private closed = false;
  /** When the session last had nothing open (for Retry-After); undefined while busy. */
  idleSince: number | undefined;

  constructor(
    readonly transport: StreamableHTTPServerTransport,
    /** Closes the MCP server and its transport; the transport's onclose forgets the session. */
    readonly close: () => Promise<void>,
    private readonly idleMs: number,
  ) {
    this.idleSince = Date.now();
  }

  /** Counts `res` as open until it closes; the idle clock runs only while nothing is open. */
  hold(res: ServerResponse): void {
    this.open++;
    this.idleSince = undefined;
    clearTimeout(this.idleTimer);
    res.once('close', () => {
      if (--this.open > 0 || this.closed) return;
      this.idleSince = Date.now();
      // Closing an idle session can only fail on a transport already gone: nothing is left to do.
      this.idleTimer = setTimeout(() => void this.close().catch(() => undefined), this.idleMs).unref();
    });
  }

  /** Stop the idle clock for good (the session is closing anyway). */
  stop(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
  }
}

/**
 * The sessions of one `mcp serve --http`, bounded: at most `maxSessions` at once (a client
 * that never sends DELETE would otherwise keep its session, its MCP server and its catalog
 * listener forever), and each closed after `idleMs` with nothing open.
 */
export class McpSessions {
  private readonly byId = new Map<string, McpSession>();
  /** Sessions being initialized: counted against the cap before they have an id. */
  private starting = 0;

  constructor(readonly limits: SessionLimits) {}

  get size(): number {
    return this.byId.size + this.starting;
  }

  full(): boolean {
    return this.size >= this.limits.maxSessions;
  }

  get(id: string): McpSession | undefined {
    return this.byId.get(id);
  }

  /** A new session counts from here until `initialized` or `abandoned`. */
  starts(): void {
    this.starting++;
  }

  initialized(id: string, session: McpSession): void {
    this.starting--;
    this.byId.set(id, session);
  }

  abandoned(): void {
    this.starting--;
  }

  forget(id: string): void {
    this.byId.get(id)?.stop();
    this.byId.delete(id);
  }

  /** Seconds until an idle session would make room (at least 1): what a refused client waits. */
  retryAfterSeconds(now = Date.now()): number {
    let soonest = this.limits.idleMs;
    for (const s of this.byId.values()) if (s.idleSince !== undefined) soonest = Math.min(soonest, s.idleSince + this.limits.idleMs - now);
    return Math.max(1, Math.ceil(soonest / 1000));
  }

  async closeAll(): Promise<void> {
    for (const s of [...this.byId.values()]) await s.close().catch(() => undefined);
    this.byId.clear();
  }
}
