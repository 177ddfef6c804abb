/**
 * `mcp serve --http` on a real broker: a client that goes away mid-call gets its call
 * cancelled on the fleet (the worker's tool sees its signal abort) and frees its in-flight
 * slot at once. Every timeout is ten minutes, so only the cancel can explain either.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import { McpHttpServer } from '../../src/mcp-server/mcp-http.js';
import type { ToolCall } from '../../src/plugins/plugin.js';
import type { Transport } from '../../src/transport/transport.js';
import { serviceDescriptor, toolDescriptor } from '../support/descriptors.js';
import { captureLogger, testRegistry } from '../support/harness.js';
import { brokerTransport, removeDir, startPulsarApp, suffix, waitUntil, writeConfigDir } from '../support/pulsar-app.js';

const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const { log } = captureLogger('warn');
const LONG_MS = 600_000;
const started: string[] = [];
const reasons: string[] = [];

let app: App;
let agent: Transport;
let client: ToolClient;
let server: McpHttpServer;
let url: string;
let dir: string;

beforeAll(async () => {
  dir = await writeConfigDir({
    services: [serviceDescriptor(`slow-${tag}`, { plugin: { kind: 'test', behaviour: 'wait' }, 'timeout-ms': LONG_MS }, { requests: 'non-persistent' })],
    tools: [toolDescriptor('slow', `slow-${tag}`, { description: 'waits until cancelled' })],
  });
  const registry = testRegistry({
    wait: (call: ToolCall) =>
      (async function* () {
        started.push(call.requestId);
        await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
        reasons.push((call.signal.reason as Error).message);
        yield 'never read';
      })(),
  });
  app = await startPulsarApp({ adminUrl, configDir: dir, log, registry, limits: { timeoutMs: LONG_MS } });
  // mcp serve's side, as the command assembles it for a broker: its own transport and client.
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
  server = new McpHttpServer(
    { catalog: () => app.catalog, onCatalogChange: (l) => app.onCatalogChange(l), client, log, maxInFlight: 4, callTimeoutMs: LONG_MS },
    { host: '127.0.0.1', port: 0, token: undefined },
  );
  url = `http://127.0.0.1:${(await server.start()).port}/mcp`;
}, 120_000);

afterAll(async () => {
  await server?.close();
  await client?.close();
  await agent?.close();
  await app?.stop(1_000);
  await removeDir(dir);
});

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

async function session(): Promise<string> {
  const init = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'goes-away', version: '1' } },
    }),
  });
  await init.text();
  const id = init.headers.get('mcp-session-id')!;
  await (
    await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': id },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  return id;
}

const workerInFlight = () => app.worker.load().reduce((n, s) => n + s.inFlight, 0);

describe('mcp serve over HTTP, a client that goes away mid-call', () => {
  it('cancels the call on the fleet and frees its slot at once', async () => {
    const id = await session();
    const gone = new AbortController();
    const call = fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': id },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: {} } }),
      signal: gone.signal,
    }).then((r) => r.text());
    const settled = call.catch((err: unknown) => err);
    await waitUntil(() => started.length === 1 && server.callsInFlight === 1 && workerInFlight() === 1, 30_000, 'the tool running');
    gone.abort();
    expect(await settled).toMatchObject({ name: 'AbortError' });
    await waitUntil(() => reasons.length === 1, 30_000, 'the worker saw the cancel');
    expect(reasons).toEqual(['the agent cancelled the call']);
    await waitUntil(() => server.callsInFlight === 0 && workerInFlight() === 0, 30_000, 'the slots free');
  }, 120_000);
});
