/**
 * The mcp plugin against the MCP project's own reference server (server-everything, npm),
 * over stdio and over streamable HTTP, through a real worker on the memory transport.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Catalog } from '../../../../src/catalog/catalog.js';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import { encodeRequest } from '../../../../src/envelope/request.js';
import type { ToolResponse } from '../../../../src/envelope/response.js';
import { defaultRegistry } from '../../../../src/plugins/default-registry.js';
import type { Plugin, PluginContext } from '../../../../src/plugins/plugin.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';
import { MemoryTransport } from '../../../../src/transport/memory-transport.js';
import { STREAM_PROPERTY, TOOL_PROPERTY } from '../../../../src/envelope/properties.js';
import { Worker } from '../../../../src/worker/worker.js';
import { asServed, captureLogger, entry } from '../../../support/harness.js';
import { everythingStdio, startEverythingHttp } from '../../../support/mcp-everything.js';
import { ResponseCollector } from '../../../support/worker-fixture.js';

const num = (name: string) => ({ name, type: 'number' });
const str = (name: string) => ({ name, type: 'string' });
const tools = (service: string) => [
  entry('tool', `${service}-echo`, { name: `${service}-echo`, service, op: 'echo', 'plugin-options': { tool: 'echo' }, arguments: [str('message')] }),
  entry('tool', `${service}-sum`, { name: `${service}-sum`, service, op: 'sum', 'plugin-options': { tool: 'get-sum' }, arguments: [num('a'), num('b')] }),
  entry('tool', `${service}-sum-raw`, { name: `${service}-sum-raw`, service, op: 'sum-raw', 'plugin-options': { tool: 'get-sum' } }),
  entry('tool', `${service}-image`, { name: `${service}-image`, service, op: 'image', 'plugin-options': { tool: 'get-tiny-image' } }),
  entry('tool', `${service}-links`, {
    name: `${service}-links`,
    service,
    op: 'links',
    'plugin-options': { tool: 'get-resource-links' },
    arguments: [num('count')],
  }),
  entry('tool', `${service}-structured`, {
    name: `${service}-structured`,
    service,
    op: 'structured',
    'plugin-options': { tool: 'get-structured-content' },
    arguments: [str('location')],
  }),
  entry('tool', `${service}-long`, {
    name: `${service}-long`,
    service,
    op: 'long',
    'plugin-options': { tool: 'trigger-long-running-operation' },
    arguments: [num('duration'), num('steps')],
  }),
  entry('tool', `${service}-slow`, {
    name: `${service}-slow`,
    service,
    op: 'slow',
    'plugin-options': { tool: 'trigger-long-running-operation' },
    'timeout-ms': 700,
    arguments: [num('duration'), num('steps')],
  }),
];

let http: Awaited<ReturnType<typeof startEverythingHttp>>;
let transport: MemoryTransport;
let worker: Worker;
let responses: ResponseCollector;
let blobDir: string;
let catalog: Catalog;
const plugins = new Map<string, Plugin>();
/** What the plugins counted besides calls (reconnects), by service. */
const events: string[] = [];

beforeAll(async () => {
  http = await startEverythingHttp();
  blobDir = await mkdtemp(join(tmpdir(), 'toolwire-mcp-blobs-'));
  const { log } = captureLogger('warn');
  const ctx: PluginContext = {
    log,
    configDir: tmpdir(),
    secrets: loadSecrets({ EVERYTHING_TEST_TOKEN: 'not-checked-by-the-server' }),
    settings: { MCP_BLOB_DIR: blobDir, PATH: process.env['PATH'] },
  };
  const withEvents = (s: string): PluginContext => ({ ...ctx, events: { count: (e) => void events.push(`${s} ${e}`) } });
  const svc = (id: string, plugin: Record<string, unknown>) =>
    entry('tool-service', id, {
      id,
      'config-params': ['op'],
      'request-queue': `non-persistent://tg/request/${id}`,
      'response-queue': 'non-persistent://tg/response/mcp',
      plugin,
    });
  const registry = defaultRegistry();
  catalog = await buildCatalog(
    [
      svc('stdio', everythingStdio()),
      ...tools('stdio'),
      svc('http', { kind: 'mcp', transport: 'http', url: http.url, token: 'env:EVERYTHING_TEST_TOKEN' }),
      ...tools('http'),
    ],
    registry,
    ctx,
    { policy: new ExecPolicy('directory') },
  );
  for (const s of catalog.services.values()) plugins.set(s.id, await (await registry.load('mcp'))!.create(asServed(s), withEvents(s.id)));
  transport = new MemoryTransport();
  responses = await ResponseCollector.on(transport, 'non-persistent://tg/response/mcp');
  worker = await Worker.create({ transport, catalog, createPlugin: async (s) => plugins.get(s.id), log, limits: { shutdownGraceMs: 2000 } });
  await worker.start();
}, 60_000);

afterAll(async () => {
  await worker?.stop(500);
  await responses?.close();
  await transport?.close();
  await http?.stop();
  await rm(blobDir, { recursive: true, force: true });
});

/** Publishes a request; returns its id. */
async function send(service: string, tool: string, args: Record<string, unknown>, stream = false): Promise<string> {
  const id = randomUUID();
  const properties: Record<string, string> = { id, [TOOL_PROPERTY]: `${service}-${tool}` };
  if (stream) properties[STREAM_PROPERTY] = 'true';
  await (await transport.producer(`non-persistent://tg/request/${service}`)).send({ data: encodeRequest({ config: {}, arguments: args }), properties });
  return id;
}

async function call(service: string, tool: string, args: Record<string, unknown>, stream = false): Promise<ToolResponse[]> {
  return responses.final(await send(service, tool, args, stream), 20_000);
}

const text = (rs: ToolResponse[]) => rs.map((r) => r.response).join('');

for (const service of ['stdio', 'http']) {
  describe(`the mcp plugin on server-everything over ${service}`, () => {
    it('answers with the text blocks, arguments coerced to their declared types', async () => {
      expect(await call(service, 'echo', { message: 'héllo' })).toEqual([{ error: null, response: 'Echo: héllo', endOfStream: true }]);
      expect(text(await call(service, 'sum', { a: '2', b: 3 }))).toBe('The sum of 2 and 3 is 5.');
    });

    it('answers an isError result as a tool-service-error with its text', async () => {
      const [r] = await call(service, 'sum-raw', { a: 'two', b: 3 });
      expect(r?.error?.type).toBe('tool-service-error');
      // The server's own validation, returned as an isError result.
      expect(r?.error?.message).toMatch(/Input validation error: .*get-sum.*expected number, received string/);
    });

    it('writes an image to the blob store and describes it, never pasting base64', async () => {
      const before = new Set(await readdir(blobDir));
      const out = text(await call(service, 'image', {}));
      const m = /\[image image\/png, (\d+) bytes, saved to (\S+\.png)\]/.exec(out);
      expect(m, out).not.toBeNull();
      expect((await stat(m![2]!)).size).toBe(Number(m![1]));
      expect([...(await readdir(blobDir))].filter((f) => !before.has(f))).toHaveLength(1);
      expect(out).not.toMatch(/iVBORw0KGgo/); // a PNG's base64 opening
    });

    it('describes resource links with their URIs, and keeps structured content as JSON text', async () => {
      const links = text(await call(service, 'links', { count: 2 }));
      expect(links.split('\n').filter((l) => /^\[resource link: .+ <demo:\/\/resource\/\S+>/.test(l))).toHaveLength(2);
      const weather = JSON.parse(text(await call(service, 'structured', { location: 'New York' }))) as Record<string, unknown>;
      expect(Object.keys(weather).sort()).toEqual(['conditions', 'humidity', 'temperature']);
    });

    it('streams progress notifications as chunks when asked, and answers once otherwise', async () => {
      const streamed = await call(service, 'long', { duration: 1, steps: 3 }, true);
      expect(streamed.length).toBeGreaterThanOrEqual(4);
      expect(streamed.slice(0, 3).map((r) => r.response)).toEqual([expect.stringMatching(/1/), expect.stringMatching(/2/), expect.stringMatching(/3/)]);
      expect(streamed.at(-2)?.response ?? '').toMatch(/completed/i);
      const single = await call(service, 'long', { duration: 1, steps: 3 });
      expect(single).toHaveLength(1);
      expect(single[0]?.response).toMatch(/completed/i);
    });

    it('bounds a call by the tool’s timeout and keeps serving', async () => {
      const [r] = await call(service, 'slow', { duration: 5, steps: 5 });
      expect(r?.error?.type).toBe('timeout');
      expect(text(await call(service, 'echo', { message: 'after' }))).toBe('Echo: after');
    });
  });
}

describe('the mcp plugin’s deadline', () => {
  it('is the worker’s when the descriptors set none, even above 120 s: the SDK is not given a shorter one', async () => {
    const { log } = captureLogger('warn');
    const own = new MemoryTransport();
    const answers = await ResponseCollector.on(own, 'non-persistent://tg/response/mcp');
    // A plugin of its own: stopping this worker closes the plugins it serves.
    const ctx: PluginContext = { log, configDir: tmpdir(), secrets: loadSecrets({ EVERYTHING_TEST_TOKEN: 'not-checked-by-the-server' }), settings: {} };
    const ownPlugin = await (await defaultRegistry().load('mcp'))!.create(asServed(catalog.services.get('http')), ctx);
    const w = await Worker.create({
      transport: own,
      catalog,
      createPlugin: async (s) => (s.id === 'http' ? ownPlugin : undefined),
      log,
      limits: { shutdownGraceMs: 2000, timeoutMs: 300_000 },
    });
    const callTool = vi.spyOn(Client.prototype, 'callTool');
    try {
      await w.start();
      const id = randomUUID();
      await (
        await own.producer('non-persistent://tg/request/http')
      ).send({ data: encodeRequest({ config: {}, arguments: { message: 'x' } }), properties: { id, [TOOL_PROPERTY]: 'http-echo' } });
      expect(text(await answers.final(id, 20_000))).toBe('Echo: x');
      const timeouts = callTool.mock.calls.map(([, , options]) => options?.timeout);
      // The SDK's own timer is set just past the call's deadline, which the worker enforces.
      expect(timeouts).toEqual([301_000]);
    } finally {
      callTool.mockRestore();
      await w.stop(500);
      await answers.close();
      await own.close();
    }
  });
});

describe('the mcp plugin when its stdio server dies', () => {
  it('fails the call in flight with a retriable error and restarts the server for the next', async () => {
    const id = await send('stdio', 'long', { duration: 5, steps: 5 }, true);
    // In flight at the server: its first progress notification has come back as a chunk.
    await vi.waitFor(() => expect(responses.byId.get(id)?.length).toBeGreaterThan(0), { timeout: 20_000, interval: 50 });
    // The server is a child of this process, started by the plugin.
    const pids = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'server-everything/dist/index.js stdio'])
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(Number(pid), 'SIGKILL');
    expect((await responses.final(id, 20_000)).at(-1)?.error?.type).toBe('unavailable');
    expect(text(await call('stdio', 'echo', { message: 'back' }))).toBe('Echo: back');
    expect(events).toContain('stdio reconnect');
  }, 30_000);
});
