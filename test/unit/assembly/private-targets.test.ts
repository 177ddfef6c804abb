/**
 * Whoever writes a remote source's descriptors chooses the URLs the worker connects to. The
 * worker may sit inside a private network, so loopback and private addresses need the
 * operator's TOOLWIRE_ALLOW_PRIVATE: at build time for a literal address or an OpenAPI
 * `allow-private`, and at each connection for a name. Real HTTP servers: one that counts what
 * reaches it, and the MCP project's reference server.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../src/assembly/build-catalog.js';
import type { Catalog } from '../../../src/catalog/catalog.js';
import { ConfigError, ToolFailedError } from '../../../src/errors.js';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import { isAsyncIterable, type Plugin, type PluginContext } from '../../../src/plugins/plugin.js';
import { ExecPolicy } from '../../../src/policy/exec-policy.js';
import { readExecRules } from '../../../src/policy/exec-rules.js';
import { loadSecrets } from '../../../src/secrets.js';
import { serviceDescriptor, toolDescriptor, type ServiceDescriptor } from '../../support/descriptors.js';
import { asServed, captureLogger, entry } from '../../support/harness.js';
import { startEverythingHttp } from '../../support/mcp-everything.js';

const registry = defaultRegistry();
const problems = (p: Promise<unknown>) =>
  p.then(
    () => [],
    (err: unknown) => (err instanceof ConfigError ? err.problems : Promise.reject(err)),
  );
const service = (id: string, plugin: ServiceDescriptor['plugin']) =>
  entry('tool-service', id, serviceDescriptor(id, { plugin }, { requests: 'non-persistent' }));
const remote = (allow?: string) => new ExecPolicy('trustgraph', readExecRules(allow === undefined ? {} : { TOOLWIRE_ALLOW_PRIVATE: allow }).rules);

let counter: Server;
let hits = 0;
let port: number;
let everything: Awaited<ReturnType<typeof startEverythingHttp>>;
const ctx: PluginContext = { log: captureLogger('warn').log, configDir: '.', secrets: loadSecrets({}), settings: {} };

beforeAll(async () => {
  counter = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"items":[]}');
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  port = (counter.address() as AddressInfo).port;
  everything = await startEverythingHttp();
}, 60_000);
afterAll(async () => {
  await everything?.stop();
  await new Promise((resolve) => counter?.close(resolve));
});
beforeEach(() => {
  hits = 0;
});

/** One call of the service's first tool (or the named MCP tool), its whole text. */
async function call(plugin: Plugin, catalog: Catalog, id: string, args: Record<string, unknown> = {}): Promise<string> {
  const s = catalog.services.get(id)!;
  const out = plugin.invoke({
    requestId: randomUUID(),
    service: s,
    tool: catalog.toolsOf(id)[0],
    config: {},
    arguments: args,
    stream: false,
    timeoutMs: 20_000,
    signal: AbortSignal.timeout(20_000),
    log: ctx.log,
  });
  if (!isAsyncIterable(out)) return out;
  let text = '';
  for await (const c of out) text += c;
  return text;
}

describe('an MCP server URL from config', () => {
  it('is refused at build time when it is a private address a remote source may not reach; nothing is sent', async () => {
    expect(
      await problems(
        buildCatalog([service('m', { kind: 'mcp', transport: 'http', url: `http://127.0.0.1:${port}/mcp` })], registry, ctx, { policy: remote() }),
      ),
    ).toEqual([
      'tool-service/m.json: plugin.url: the worker does not connect to 127.0.0.1, a loopback address, for the TrustGraph config service: TOOLWIRE_ALLOW_PRIVATE is unset, which allows none for this source; add their CIDRs to TOOLWIRE_ALLOW_PRIVATE to allow it',
    ]);
    expect(hits).toBe(0);
  });

  it('is refused at connect time when its name resolves to a private address, at the check and at calls', async () => {
    const m = service('m', { kind: 'mcp', transport: 'http', url: `http://localhost:${port}/mcp` });
    expect(await problems(buildCatalog([m], registry, ctx, { policy: remote() }))).toEqual([
      expect.stringMatching(
        /^tool-service\/m\.json: plugin\.url: host localhost resolves to (127\.0\.0\.1|::1), a loopback address, which is not allowed \(see TOOLWIRE_ALLOW_PRIVATE\)$/,
      ),
    ]);
    // A plugin made for a remote source holds to it whatever the name answers later.
    const catalog = await buildCatalog([m, entry('tool', 'echo', toolDescriptor('echo', 'm'))], registry, ctx, { portable: true });
    const plugin = await (await registry.load('mcp'))!.create(asServed(catalog.services.get('m')), { ...ctx, policy: remote() });
    try {
      const failed = await call(plugin, catalog, 'm', { message: 'x' }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(ToolFailedError);
      expect((failed as Error).message).toMatch(/the MCP server's address is refused: host localhost resolves to .*, a loopback address/);
    } finally {
      await plugin.close?.();
    }
    expect(hits).toBe(0);
  });

  it('is reached through the guard when the operator allows its network, and as before from the operator’s directory', async () => {
    const entries = [service('e', { kind: 'mcp', transport: 'http', url: everything.url }), entry('tool', 'echo', toolDescriptor('echo', 'e'))];
    const policy = remote('127.0.0.1/32');
    const catalog = await buildCatalog(entries, registry, ctx, { policy });
    const plugin = await (await registry.load('mcp'))!.create(asServed(catalog.services.get('e')), { ...ctx, policy });
    try {
      expect(await call(plugin, catalog, 'e', { message: 'guarded' })).toBe('Echo: guarded');
    } finally {
      await plugin.close?.();
    }
    expect((await buildCatalog(entries, registry, ctx, { policy: new ExecPolicy('directory') })).services.has('e')).toBe(true);
    // Another loopback address than the one allowed is still refused.
    expect(
      await problems(buildCatalog([service('m', { kind: 'mcp', transport: 'http', url: `http://127.0.0.2:${port}/mcp` })], registry, ctx, { policy })),
    ).toEqual([expect.stringMatching(/plugin\.url: the worker does not connect to 127\.0\.0\.2, a loopback address/)]);
  });
});

describe('an OpenAPI service’s allow-private from config', () => {
  const api = (allowPrivate: unknown) => [
    service('api', { kind: 'openapi', server: `http://127.0.0.1:${port}`, 'allow-private': allowPrivate }),
    entry('tool', 'items', toolDescriptor('items', 'api', { 'plugin-options': { method: 'get', path: '/items' } })),
  ];

  it('needs the operator’s leave for a remote source', async () => {
    expect(await problems(buildCatalog(api(true), registry, ctx, { policy: remote() }))).toEqual([
      'tool-service/api.json: plugin.allow-private: the worker does not connect to every private address (loopback, private, link-local...) for the TrustGraph config service: TOOLWIRE_ALLOW_PRIVATE is unset, which allows none for this source; add their CIDRs to TOOLWIRE_ALLOW_PRIVATE to allow it',
    ]);
    expect(await problems(buildCatalog(api(['127.0.0.0/8']), registry, ctx, { policy: remote('127.0.0.1/32') }))).toEqual([
      expect.stringMatching(/^tool-service\/api\.json: plugin\.allow-private: the worker does not connect to 127\.0\.0\.0\/8 /),
    ]);
    expect(hits).toBe(0);
  });

  it('reaches the private server when the operator’s list covers what the descriptor asks, and from the directory as before', async () => {
    for (const [allow, policy] of [
      [['127.0.0.1/32'], remote('127.0.0.0/8')],
      [true, new ExecPolicy('directory')],
    ] as const) {
      const catalog = await buildCatalog(api(allow), registry, ctx, { policy });
      const plugin = await (await registry.load('openapi'))!.create(asServed(catalog.services.get('api')), { ...ctx, policy });
      try {
        expect(await call(plugin, catalog, 'api')).toBe('{"items":[]}');
      } finally {
        await plugin.close?.();
      }
    }
    expect(hits).toBe(2);
  });
});
