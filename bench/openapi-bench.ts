import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Agent } from 'undici';
import { startApp, type App } from '../src/assembly/app.js';
import { loadSecrets } from '../src/secrets.js';
import { readSettings } from '../src/settings.js';
import { MemoryTransport } from '../src/transport/memory-transport.js';
import { bestRound, measureCalls, type CallBenchOptions, type Figures } from './call-figures.js';
import { writeServiceConfig } from './service-config.js';

export interface OpenApiBenchResult {
  /** The local API called with undici's request on a keep-alive pool (what the plugin uses). */
  readonly direct: Figures;
  /** The same call as an agent makes it: ToolClient -> worker (memory transport) -> openapi plugin -> the API. */
  readonly plugin: Figures;
  /** The same path with the built-in echo module in place of the plugin: what the worker and the agent's client cost alone. */
  readonly worker: Figures;
  readonly p50Ratio: number;
  readonly throughputRatio: number;
}

/** A small JSON API on loopback: GET /echo?message=... answers {"message": ...}, after `delayMs`. */
async function startEchoApi(delayMs: number): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const message = new URL(req.url ?? '/', 'http://x').searchParams.get('message');
    const body = JSON.stringify({ message });
    const answer = () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * The openapi plugin's cost: a local JSON API called directly with undici's request on a
 * keep-alive pool (as the plugin calls it), and the same call made as an agent makes it through a worker; rounds
 * alternated, the best of each reported. Both share one process with the API, so the
 * comparison is of the work each path adds.
 */
export async function runOpenApiBench(o: CallBenchOptions & { readonly apiDelayMs: number }): Promise<OpenApiBenchResult> {
  const log = pino({ level: 'silent' });
  const api = await startEchoApi(o.apiDelayMs);
  const pool = new Agent({ keepAliveTimeout: 60_000 });
  const config = await writeServiceConfig([
    {
      id: 'echo-api',
      requestQueue: 'persistent://tg/flow/echo-api-request',
      responseQueue: 'non-persistent://tg/response/echo-api',
      plugin: { kind: 'openapi', server: api.base, 'allow-private': ['127.0.0.0/8'] },
      concurrency: o.concurrency,
      tools: [
        {
          name: 'echo',
          arguments: [{ name: 'message', type: 'string' }],
          extra: { 'plugin-options': { method: 'get', path: '/echo', parameters: [{ argument: 'message', name: 'message', in: 'query' }] } },
        },
      ],
    },
    {
      id: 'echo-module',
      requestQueue: 'persistent://tg/flow/echo-module-request',
      responseQueue: 'non-persistent://tg/response/echo-module',
      module: 'builtin:echo',
      concurrency: o.concurrency,
      tools: [{ name: 'say', arguments: [{ name: 'text', type: 'string' }] }],
    },
  ]);
  let app: App | undefined;
  try {
    const settings = readSettings({
      TOOLWIRE_CONFIG_DIR: config.dir,
      TOOLWIRE_HTTP_PORT: 'off',
      TOOLWIRE_CONCURRENCY: String(o.concurrency * 2),
      LOG_LEVEL: 'silent',
    });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log });
    const client = app.client;
    const directRounds: Figures[] = [];
    const pluginRounds: Figures[] = [];
    const workerRounds: Figures[] = [];
    for (let r = 0; r < o.rounds; r++) {
      directRounds.push(
        await measureCalls(async (n) => {
          const res = await pool.request({ origin: api.base, path: `/echo?message=m${n}`, method: 'GET' });
          if ((await res.body.text()).length === 0) throw new Error('empty answer');
        }, o),
      );
      pluginRounds.push(
        await measureCalls(async (n) => {
          await client.call({
            requestQueue: 'persistent://tg/flow/echo-api-request',
            responseQueue: 'non-persistent://tg/response/echo-api',
            config: {},
            arguments: { message: `m${n}` },
            tool: 'echo',
          });
        }, o),
      );
      workerRounds.push(
        await measureCalls(async (n) => {
          await client.call({
            requestQueue: 'persistent://tg/flow/echo-module-request',
            responseQueue: 'non-persistent://tg/response/echo-module',
            config: {},
            arguments: { text: `m${n}` },
            tool: 'say',
          });
        }, o),
      );
    }
    const d = bestRound(directRounds);
    const p = bestRound(pluginRounds);
    return { direct: d, plugin: p, worker: bestRound(workerRounds), p50Ratio: p.p50Ms / d.p50Ms, throughputRatio: p.callsPerSec / d.callsPerSec };
  } finally {
    await app?.stop(1000);
    await pool.close();
    await new Promise((r) => api.server.close(r));
    await config.remove();
  }
}
