/**
 * `mcp serve --http` keeps a bounded number of sessions: in process, so that sessions and
 * catalog listeners are counted exactly, and the heap is read after a full GC.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import type { FleetDeps } from '../../../src/mcp-server/fleet-mcp-server.js';
import { McpHttpServer } from '../../../src/mcp-server/mcp-http.js';
import { McpSession } from '../../../src/mcp-server/mcp-sessions.js';
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

/** An initialize whose client never sends DELETE; its status, Retry-After and session id. */
async function initialize(url: string): Promise<{ status: number; retryAfter: string | null; session: string | null; body: string }> {
  const r = await fetch(url, { method: 'POST', headers: HEADERS, body: INIT });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), session: r.headers.get('mcp-session-id'), body: await r.text() };
}

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

describe('mcp serve over HTTP keeps its sessions bounded', () => {
  it('keeps at most the cap after 10,000 initializes without DELETE, answers 503 with Retry-After past it, and the heap stays flat', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 100, idleMs: 600_000 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    try {
      const statuses = new Map<number, number>();
      // Ten clients at a time.
      const count = async (n: number) => {
        for (let i = 0; i < n; i += 10) {
          for (const r of await Promise.all(Array.from({ length: 10 }, () => initialize(url)))) {
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (r.status === 503) {
              // Seconds until the longest-idle session would go: within the idle time.
              expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
              expect(Number(r.retryAfter)).toBeLessThanOrEqual(600);
              expect(JSON.parse(r.body)).toMatchObject({
                jsonrpc: '2.0',
                error: { code: -32000, message: expect.stringMatching(/100 MCP sessions are open, the most this server keeps/) },
                id: null,
              });
            }
          }
        }
      };
      await count(1_000);
      const before = heapMb();
      await count(9_000);
      const after = heapMb();
      expect(Object.fromEntries(statuses)).toEqual({ 200: 100, 503: 9_900 });
      expect(server.sessionCount).toBe(100);
      expect(listeners).toBe(100);
      // 100 sessions were already open at `before`; 9,000 refusals more must cost next to nothing
      // (with no cap they cost about 31 kB each: 280 MB).
      expect(after - before).toBeLessThan(15);
    } finally {
      await server.close();
    }
    expect(listeners).toBe(0);
  }, 180_000);

  it('frees a session on DELETE and closes idle ones, so that the room comes back', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 3, idleMs: 300 });
    const { port } = await server.start();
    const url = `http://127.0.0.1:${port}/mcp`;
    try {
      const first = await initialize(url);
      expect(first.status).toBe(200);
      await initialize(url);
      await initialize(url);
      const refused = await initialize(url);
      expect(refused.status).toBe(503);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      const del = await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': first.session!, 'mcp-protocol-version': '2025-06-18' } });
      expect(del.status).toBe(200);
      expect(server.sessionCount).toBe(2);
      expect(listeners).toBe(2);
      // Nothing open on the other two: they go after 300 ms idle, and their listeners with them.
      await waitUntil(() => server.sessionCount === 0 && listeners === 0, 20_000, 'idle sessions closed');
      expect((await initialize(url)).status).toBe(200);
    } finally {
      await server.close();
    }
    expect(listeners).toBe(0);
  }, 60_000);

  it('leaves no session behind for an initialize it refuses', async () => {
    const server = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined, maxSessions: 3, idleMs: 600_000 });
    const { port } = await server.start();
    const stop = vi.spyOn(McpSession.prototype, 'stop');
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
      const session = new McpSession({} as StreamableHTTPServerTransport, close, 1_000);
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
