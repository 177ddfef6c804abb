import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pino from 'pino';
import { startApp, type App } from '../src/app.js';
import type { FleetDeps } from '../src/mcp-server/fleet-mcp-server.js';
import { McpHttpServer } from '../src/mcp-server/mcp-http.js';
import { isolatingFetch } from '../src/plugins/mcp/isolating-fetch.js';
import { loadSecrets } from '../src/secrets.js';
import { readSettings } from '../src/settings.js';
import { MemoryTransport } from '../src/transport/memory-transport.js';
import { REPO_ROOT } from './child-process.js';
import { writeServiceConfig } from './service-config.js';

const EVERYTHING = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export interface McpBenchOptions {
  /** Calls one after another, for latency. */
  readonly sequential: number;
  /** Calls in flight at once, for throughput. */
  readonly concurrency: number;
  /** Calls made at that concurrency. */
  readonly concurrentCalls: number;
  /** Direct and through-toolwire measured this many times each, alternated. */
  readonly rounds: number;
}

export interface Figures {
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly callsPerSec: number;
}

export interface McpBenchResult {
  /** server-everything's echo, called with the MCP SDK's Client over stdio. */
  readonly direct: Figures;
  /** The same call as an agent makes it: ToolClient -> worker (memory transport) -> mcp plugin -> the server. */
  readonly plugin: Figures;
  /** `mcp serve` (streamable HTTP, embedded worker) called with the SDK's Client: the module echo tool. */
  readonly serve: Figures;
  readonly p50Ratio: number;
  readonly throughputRatio: number;
}

const median = (xs: number[], p = 0.5) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

async function measure(call: (n: number) => Promise<void>, o: McpBenchOptions): Promise<Figures> {
  for (let n = 0; n < 50; n++) await call(n); // warm-up
  const lat: number[] = [];
  for (let n = 0; n < o.sequential; n++) {
    const t = performance.now();
    await call(n);
    lat.push(performance.now() - t);
  }
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.concurrentCalls) await call(next++);
    }),
  );
  return { p50Ms: median(lat), p90Ms: median(lat, 0.9), callsPerSec: (o.concurrentCalls / (performance.now() - t0)) * 1000 };
}

/** The best round of each (the least disturbed by the neighbours), as figures. */
function best(rounds: Figures[]): Figures {
  return { p50Ms: Math.min(...rounds.map((r) => r.p50Ms)), p90Ms: Math.min(...rounds.map((r) => r.p90Ms)), callsPerSec: Math.max(...rounds.map((r) => r.callsPerSec)) };
}

/**
 * The mcp plugin's cost: server-everything's `echo` called directly with the SDK, and the
 * same call made as an agent makes it through a worker; rounds alternated. Then `mcp serve`
 * under the given concurrency of client calls.
 */
export async function runMcpBench(o: McpBenchOptions): Promise<McpBenchResult> {
  const log = pino({ level: 'silent' });
  const direct = new Client({ name: 'bench', version: '1' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));
  const config = await writeServiceConfig([
    {
      id: 'everything',
      requestQueue: 'persistent://tg/flow/everything-request',
      responseQueue: 'non-persistent://tg/response/everything',
      plugin: { kind: 'mcp', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
      concurrency: o.concurrency,
      tools: [{ name: 'echo', arguments: [{ name: 'message', type: 'string' }] }],
    },
    { id: 'local-echo', requestQueue: 'persistent://tg/flow/local-echo-request', responseQueue: 'non-persistent://tg/response/local-echo', module: 'builtin:echo', concurrency: o.concurrency, tools: [{ name: 'say', arguments: [{ name: 'text', type: 'string' }] }] },
  ]);
  let app: App | undefined;
  let http: McpHttpServer | undefined;
  let served: Client | undefined;
  try {
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: config.dir, TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONCURRENCY: String(o.concurrency * 2), LOG_LEVEL: 'silent', PATH: process.env['PATH'] });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log });
    const viaWorker = app.client;
    const directRounds: Figures[] = [];
    const pluginRounds: Figures[] = [];
    for (let r = 0; r < o.rounds; r++) {
      directRounds.push(
        await measure(async (n) => {
          await direct.callTool({ name: 'echo', arguments: { message: `m${n}` } });
        }, o),
      );
      pluginRounds.push(
        await measure(async (n) => {
          await viaWorker.call({ requestQueue: 'persistent://tg/flow/everything-request', responseQueue: 'non-persistent://tg/response/everything', config: {}, arguments: { message: `m${n}` }, tool: 'echo' });
        }, o),
      );
    }
    const a = app;
    const deps: FleetDeps = { catalog: () => a.catalog, onCatalogChange: (l) => a.onCatalogChange(l), client: a.client, log, maxInFlight: o.concurrency * 2, callTimeoutMs: 60_000 };
    http = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined });
    const at = await http.start();
    served = new Client({ name: 'bench', version: '1' });
    await served.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${at.port}/mcp`), { fetch: isolatingFetch() }));
    const s = served;
    const serve = await measure(async (n) => {
      await s.callTool({ name: 'say', arguments: { text: `m${n}` } });
    }, o);
    const d = best(directRounds);
    const p = best(pluginRounds);
    return { direct: d, plugin: p, serve, p50Ratio: p.p50Ms / d.p50Ms, throughputRatio: p.callsPerSec / d.callsPerSec };
  } finally {
    await served?.close().catch(() => undefined);
    await http?.close();
    await app?.stop(1000);
    await direct.close().catch(() => undefined);
    await config.remove();
  }
}
