import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pino from 'pino';
import { startApp, type App } from '../src/assembly/app.js';
import type { FleetDeps } from '../src/mcp-server/fleet-mcp-server.js';
import { McpHttpServer } from '../src/mcp-server/mcp-http.js';
import { isolatingFetch } from '../src/plugins/mcp/isolating-fetch.js';
import { loadSecrets } from '../src/secrets.js';
import { readSettings } from '../src/settings.js';
import { MemoryTransport } from '../src/transport/memory-transport.js';
import { REPO_ROOT } from './child-process.js';
import { writeServiceConfig } from './service-config.js';
import { bestRound, measureCalls, type CallBenchOptions, type Figures } from './call-figures.js';

const EVERYTHING = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export type McpBenchOptions = CallBenchOptions;

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
    {
      id: 'local-echo',
      requestQueue: 'persistent://tg/flow/local-echo-request',
      responseQueue: 'non-persistent://tg/response/local-echo',
      module: 'builtin:echo',
      concurrency: o.concurrency,
      tools: [{ name: 'say', arguments: [{ name: 'text', type: 'string' }] }],
    },
  ]);
  let app: App | undefined;
  let http: McpHttpServer | undefined;
  let served: Client | undefined;
  try {
    const settings = readSettings({
      TOOLWIRE_CONFIG_DIR: config.dir,
      TOOLWIRE_HTTP_PORT: 'off',
      TOOLWIRE_CONCURRENCY: String(o.concurrency * 2),
      LOG_LEVEL: 'silent',
      PATH: process.env['PATH'],
    });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log });
    const viaWorker = app.client;
    const directRounds: Figures[] = [];
    const pluginRounds: Figures[] = [];
    for (let r = 0; r < o.rounds; r++) {
      directRounds.push(
        await measureCalls(async (n) => {
          await direct.callTool({ name: 'echo', arguments: { message: `m${n}` } });
        }, o),
      );
      pluginRounds.push(
        await measureCalls(async (n) => {
          await viaWorker.call({
            requestQueue: 'persistent://tg/flow/everything-request',
            responseQueue: 'non-persistent://tg/response/everything',
            config: {},
            arguments: { message: `m${n}` },
            tool: 'echo',
          });
        }, o),
      );
    }
    const a = app;
    const deps: FleetDeps = {
      catalog: () => a.catalog,
      onCatalogChange: (l) => a.onCatalogChange(l),
      client: a.client,
      log,
      maxInFlight: o.concurrency * 2,
      callTimeoutMs: 60_000,
    };
    http = new McpHttpServer(deps, { host: '127.0.0.1', port: 0, token: undefined });
    const at = await http.start();
    served = new Client({ name: 'bench', version: '1' });
    await served.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${at.port}/mcp`), { fetch: isolatingFetch() }));
    const s = served;
    const serve = await measureCalls(async (n) => {
      await s.callTool({ name: 'say', arguments: { text: `m${n}` } });
    }, o);
    const d = bestRound(directRounds);
    const p = bestRound(pluginRounds);
    return { direct: d, plugin: p, serve, p50Ratio: p.p50Ms / d.p50Ms, throughputRatio: p.callsPerSec / d.callsPerSec };
  } finally {
    await served?.close().catch(() => undefined);
    await http?.close();
    await app?.stop(1000);
    await direct.close().catch(() => undefined);
    await config.remove();
  }
}
