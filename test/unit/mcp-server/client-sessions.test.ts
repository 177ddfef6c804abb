/**
 * `mcp serve --http` keeps a bounded number of sessions: in process, so that sessions and
 * catalog listeners are counted exactly, and the heap is read after a full GC.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import type { FleetDeps } from '../../../src/mcp-server/fleet-mcp-server.js';
import { McpHttpServer } from '../../../src/mcp-server/mcp-http.js';
import { ClientSession } from '../../../src/mcp-server/client-sessions.js';
import { clientKey } from '../../../src/mcp-server/client-key.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { captureLogger } from '../../support/harness.js';
import { waitUntil } from '../../support/pulsar-app.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let app: App;
let listeners = 0;
let deps: FleetDeps;
beforeAll(async () => {
  const { log } = captureLogger('warn');
  app = await startApp({
    settings: readSettings({ TOOLWIRE_CONFIG_DIR: 'config', TOOLWIRE_HTTP_PORT: 'off' }),
    transport: new MemoryTransport(),
    secrets: loadSecrets({}),
    log,
  });
  deps = {
    catalog: () => app.catalog,
    onCatalogChange: (l) => {
      listeners++;
      const stop = app.onCatalogChange(l);
      return () => {
        listeners--;
        stop();
      };
    },
    client: app.client,
    log,
    maxInFlight: 8,
    callTimeoutMs: 10_000,
  };
});
afterAll(async () => {
  await app?.stop(100);
});

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'leaky', version: '1' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A client of its own loopback address (127.0.0.2, ...), as another machine would be. */
function clientAt(localAddress: string): Agent {
  return new Agent({ localAddress });
}

/** An initialize whose client never sends DELETE; its status, Retry-After and session id. */
async function initialize(url: string, from?: Agent): Promise<{ status: number; retryAfter: string | null; session: string | null; body: string }> {
  const r = await undiciFetch(url, { method: 'POST', headers: HEADERS, body: INIT, ...(from ? { dispatcher: from } : {}) });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), session: r.headers.get('mcp-session-id'), body: await r.text() };
}

/** Opens the session's stream (GET) and keeps it open until `abort`: the session is busy meanwhile. */
async function holdStream(url: string, session: string, abort: AbortController, from?: Agent): Promise<void> {
  const r = await undiciFetch(url, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    signal: abort.signal,
    ...(from ? { dispatcher: from } : {}),
  });
  expect(r.status).toBe(200);
  // Read, so that the stream stays open and its end (on abort) is noticed; never finishes by itself.
  void r.body?.pipeTo(new WritableStream()).catch(() => undefined);
}

/** Whether the server still knows a session: a GET on an unknown one is 404. */
async function knows(url: string, session: string): Promise<boolean> {
  const abort = new AbortController();
  const r = await undiciFetch(url, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    signal: abort.signal,
  });
  abort.abort();
  await r.body?.cancel().catch(() => undefined);
  return r.status !== 404;
}

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

describe('mcp serve over HTTP keeps its sessions bounded', () => {
  it('keeps at most the cap after 3,000 initializes past it while every session is busy, answers 503 with Retry-After, and the heap stays flat', async () => {
    // One client here: its own cap above the server's, so that the server's is what holds.
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 100, maxSessionsPerClient: 1_000, idleMs: 600_000 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    const streams = new AbortController();
    try {
      // A hundred sessions, each with its stream open: none is idle, so none may give way.
      for (let i = 0; i < 100; i += 10) {
        const opened = await Promise.all(Array.from({ length: 10 }, () => initialize(url)));
        for (const r of opened) expect(r.status).toBe(200);
        await Promise.all(opened.map((r) => holdStream(url, r.session!, streams)));
      }
      const statuses = new Map<number, number>();
      // Ten clients at a time.
      const count = async (n: number) => {
        for (let i = 0; i < n; i += 10) {
          for (const r of await Promise.all(Array.from({ length: 10 }, () => initialize(url)))) {
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (r.status === 503) {
              // Room comes back when a session's requests and streams end, not at the idle time.
              expect(Number(r.retryAfter)).toBe(10);
              expect(JSON.parse(r.body)).toMatchObject({
                jsonrpc: '2.0',
                error: {
                  code: -32000,
                  message: expect.stringMatching(/100 MCP sessions are open, the most this server keeps .*each with a request or stream open/),
                },
                id: null,
              });
            }
          }
        }
      };
      await count(500);
      const before = heapMb();
      await count(2_500);
      const after = heapMb();
      expect(Object.fromEntries(statuses)).toEqual({ 503: 3_000 });
      expect(server.sessionCount).toBe(100);
      expect(listeners).toBe(100);
      // 100 sessions were already open at `before`; 2,500 refusals more must cost next to nothing
      // (with no cap they cost about 31 kB each).
      expect(after - before).toBeLessThan(15);
    } finally {
      streams.abort();
      await server.close();
    }
    expect(listeners).toBe(0);
  }, 180_000);

  it('lets the least recently used idle session give way: 3,000 initializes without DELETE keep 100 sessions, every one answered', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 100, idleMs: 600_000 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    try {
      const first = await initialize(url);
      const statuses = new Map<number, number>([[first.status, 1]]);
      for (let i = 1; i < 3_000; i += 10) {
        for (const r of await Promise.all(Array.from({ length: Math.min(10, 3_000 - i) }, () => initialize(url))))
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
      expect(Object.fromEntries(statuses)).toEqual({ 200: 3_000 });
      expect(server.sessionCount).toBe(100);
      // The sessions that gave way closed, their catalog listeners with them.
      await waitUntil(() => listeners === 100, 20_000, 'evicted sessions closed');
      // The first was the least recently used: it went first, and its client hears so.
      expect(await knows(url, first.session!)).toBe(false);
    } finally {
      await server.close();
    }
    expect(listeners).toBe(0);
  }, 180_000);

  it('gives a new client the room of an idle session when one client filled the server', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 3, idleMs: 600_000 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    const other = clientAt('127.0.0.2');
    try {
      const filled = [];
      for (let i = 0; i < 3; i++) filled.push(await initialize(url));
      expect(filled.map((r) => r.status)).toEqual([200, 200, 200]);
      // Before: 503, retry-after close to the 600 s idle time.
      const next = await initialize(url, other);
      expect(next.status).toBe(200);
      expect(server.sessionCount).toBe(3);
      expect(await knows(url, filled[0]!.session!)).toBe(false);
      expect(await knows(url, filled[1]!.session!)).toBe(true);
      expect(await knows(url, filled[2]!.session!)).toBe(true);
    } finally {
      await other.close();
      await server.close();
    }
  });

  it('holds one client to its own cap: past it, its idle sessions give way to its new ones, and with all busy it is refused while another client is not', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 10, maxSessionsPerClient: 2, idleMs: 600_000 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    const other = clientAt('127.0.0.2');
    const streams = new AbortController();
    try {
      const theirs = await initialize(url, other);
      const mine = [await initialize(url), await initialize(url)];
      // Idle: the third of this client takes the room of its own first, never the other client's.
      const third = await initialize(url);
      expect(third.status).toBe(200);
      expect(server.sessionCount).toBe(3);
      expect(await knows(url, mine[0]!.session!)).toBe(false);
      expect(await knows(url, theirs.session!)).toBe(true);
      // Busy: refused, naming the per-client setting.
      await holdStream(url, mine[1]!.session!, streams);
      await holdStream(url, third.session!, streams);
      const refused = await initialize(url);
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe('10');
      expect(JSON.parse(refused.body).error.message).toMatch(
        /^this client \(127\.0\.0\.1\) has 2 MCP sessions open, the most one client keeps \(TOOLWIRE_MCP_MAX_SESSIONS_PER_CLIENT\)/,
      );
      expect((await initialize(url, other)).status).toBe(200);
    } finally {
      streams.abort();
      await other.close();
      await server.close();
    }
  });

  it('frees a session on DELETE and closes idle ones, so that the room comes back', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 3, idleMs: 300 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    const streams = new AbortController();
    try {
      const opened = [await initialize(url), await initialize(url), await initialize(url)];
      expect(opened.map((r) => r.status)).toEqual([200, 200, 200]);
      for (const r of opened) await holdStream(url, r.session!, streams);
      const refused = await initialize(url);
      expect(refused.status).toBe(503);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      const del = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': opened[0]!.session!, 'mcp-protocol-version': '2025-06-18' } });
      expect(del.status).toBe(200);
      expect(server.sessionCount).toBe(2);
      await waitUntil(() => listeners === 2, 5_000, 'the deleted session closed');
      // Their streams closed, nothing is open on the other two: they go after 300 ms idle, and their listeners with them.
      streams.abort();
      await waitUntil(() => server.sessionCount === 0 && listeners === 0, 20_000, 'idle sessions closed');
      expect((await initialize(url)).status).toBe(200);
    } finally {
      streams.abort();
      await server.close();
    }
    expect(listeners).toBe(0);
  }, 60_000);

  it('leaves no session behind for an initialize it refuses', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 3, idleMs: 600_000 });
    const { port } = await server.start();
    const stop = vi.spyOn(ClientSession.prototype, 'stop');
    try {
      // The SDK refuses an initialize without the Accept it needs (406): no session may stay.
      const r = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: INIT,
      });
      expect(r.status).toBe(406);
      expect([server.sessionCount, listeners]).toEqual([0, 0]);
      // Stopped, so that its response closing arms no idle clock that would keep it for the idle time.
      await waitUntil(() => stop.mock.calls.length > 0, 5_000, 'refused session stopped');
    } finally {
      stop.mockRestore();
      await server.close();
    }
  });

  it('gives the room back when an initialize fails inside the SDK', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 1, idleMs: 600_000 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    // A fault the real SDK cannot be made to raise on demand.
    const handle = vi.spyOn(StreamableHTTPServerTransport.prototype, 'handleRequest').mockRejectedValueOnce(new Error('transport fault'));
    try {
      expect((await initialize(url)).status).toBe(500);
      expect(server.sessionCount).toBe(0);
      expect((await initialize(url)).status).toBe(200);
    } finally {
      handle.mockRestore();
      await server.close();
    }
  });
});

describe('an MCP session that was stopped', () => {
  it('arms no idle close when a response it held closes afterwards (the DELETE that closed it)', () => {
    vi.useFakeTimers();
    try {
      const close = vi.fn(() => Promise.resolve());
      const session = new ClientSession({} as StreamableHTTPServerTransport, close, 1_000, '127.0.0.1');
      const res = new EventEmitter();
      session.hold(res as ServerResponse);
      session.stop();
      res.emit('close');
      vi.advanceTimersByTime(10_000);
      expect(close).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the client an mcp serve session counts against', () => {
  it('is the remote address: IPv4 as it is, IPv4-mapped as IPv4, IPv6 by its /64', () => {
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb::9')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientKey(undefined)).toBe('unknown');
  });
});
