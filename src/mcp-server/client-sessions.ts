import type { ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface SessionLimits {
  /** Sessions at once, initializing ones included. */
  readonly maxSessions: number;
  /** Sessions one client (clientKey: its address) may hold at once, initializing ones included. */
  readonly maxSessionsPerClient: number;
  /** A session with nothing open (no request, no stream) this long is closed. */
  readonly idleMs: number;
}

/**
 * A local server's clients are few; an abandoned session goes within a quarter hour, or sooner
 * when a new one needs its room. One address may hold a tenth of the sessions: enough for an
 * agent runtime that opens one per conversation, too few to crowd out nine others.
 */
export const DEFAULT_SESSION_LIMITS: SessionLimits = { maxSessions: 1000, maxSessionsPerClient: 100, idleMs: 15 * 60_000 };

/** What a refused client is told to wait: room comes back as soon as a session's requests and streams end. */
export const BUSY_RETRY_AFTER_SECONDS = 10;

/** Why a new session was refused: every session in the way has a request or stream open. */
export interface SessionRefusal {
  /** `server`: the server holds maxSessions; `client`: this client holds maxSessionsPerClient. */
  readonly full: 'server' | 'client';
  /** Sessions open in that scope. */
  readonly open: number;
  readonly retryAfterSeconds: number;
}

/** One client's MCP session: its transport, how to close it, and what it has open now. */
export class ClientSession {
  /** Requests and streams whose HTTP response is still open. */
  private open = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Set by `stop`: a response that closes afterwards (the DELETE's own) must not arm the clock again. */
  private closed = false;
  /** When the session last had nothing open: the least recently used idle session gives way first; undefined while busy. */
  idleSince: number | undefined;

  constructor(
    readonly transport: StreamableHTTPServerTransport,
    /** Closes the MCP server and its transport; the transport's onclose forgets the session. */
    readonly close: () => Promise<void>,
    private readonly idleMs: number,
    /** Who opened it (clientKey): what the per-client cap counts by. */
    readonly client: string,
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
 * listener forever), at most `maxSessionsPerClient` of one client, and each closed after
 * `idleMs` with nothing open. When a bound is reached, an idle session (no request or stream
 * open) gives way to the new one, the least recently used first: a client that opened every
 * session and went quiet does not lock the next one out for the idle time.
 */
export class ClientSessions {
  private readonly byId = new Map<string, ClientSession>();
  /** Sessions being initialized: counted against the caps before they have an id. */
  private starting = 0;
  /** Sessions of each client, initializing ones included. */
  private readonly perClient = new Map<string, number>();

  constructor(readonly limits: SessionLimits) {}

  get size(): number {
    return this.byId.size + this.starting;
  }

  /** Sessions `client` holds now, initializing ones included. */
  heldBy(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  get(id: string): ClientSession | undefined {
    return this.byId.get(id);
  }

  /**
   * Room for one more session of `client`, made by closing idle sessions where a cap is
   * reached: its own least recently used one at the per-client cap, anyone's at the server's.
   * Undefined when there is room, and the session counts from here until `initialized` or
   * `abandoned`; else why not.
   */
  admit(client: string): SessionRefusal | undefined {
    const own = this.heldBy(client);
    if (own >= this.limits.maxSessionsPerClient && !this.evictIdle((s) => s.client === client))
      return { full: 'client', open: own, retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS };
    if (this.size >= this.limits.maxSessions && !this.evictIdle(() => true))
      return { full: 'server', open: this.size, retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS };
    this.starting++;
    this.perClient.set(client, this.heldBy(client) + 1);
    return undefined;
  }

  initialized(id: string, session: ClientSession): void {
    this.starting--;
    this.byId.set(id, session);
  }

  abandoned(client: string): void {
    this.starting--;
    this.release(client);
  }

  /** Idempotent: an evicted session's transport forgets it again as it closes. */
  forget(id: string): void {
    const session = this.byId.get(id);
    if (!session) return;
    session.stop();
    this.byId.delete(id);
    this.release(session.client);
  }

  private release(client: string): void {
    const left = this.heldBy(client) - 1;
    if (left > 0) this.perClient.set(client, left);
    else this.perClient.delete(client);
  }

  /** Closes the least recently used idle session that `eligible` takes; false when none is idle. */
  private evictIdle(eligible: (session: ClientSession) => boolean): boolean {
    let lru: { id: string; session: ClientSession; idleSince: number } | undefined;
    for (const [id, session] of this.byId) {
      const idleSince = session.idleSince;
      if (idleSince !== undefined && (lru === undefined || idleSince < lru.idleSince) && eligible(session)) lru = { id, session, idleSince };
    }
    if (!lru) return false;
    // Its room is free now; the close (MCP server, catalog listener) finishes on its own.
    this.forget(lru.id);
    void lru.session.close().catch(() => undefined);
    return true;
  }

  async closeAll(): Promise<void> {
    for (const s of [...this.byId.values()]) await s.close().catch(() => undefined);
    this.byId.clear();
    this.perClient.clear();
  }
}
