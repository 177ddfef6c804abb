/**
 * The openapi plugin end to end on the memory transport: a document imported as the CLI
 * does, a real worker, and a real HTTP server on loopback (test/support/items-api.ts).
 * Names resolve through an injected resolver, and a guard on net.Socket refuses any connection
 * beyond loopback, so no test can reach another address even if the plugin's guard broke.
 */
import net from 'node:net';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import { ToolClient, ToolResponseError } from '../../../../src/client/tool-client.js';
import type { ConfigEntry } from '../../../../src/config/config-store.js';
import type { Resolver } from '../../../../src/net/address-guard.js';
import { loadApi } from '../../../../src/plugins/openapi/openapi-document.js';
import { openApiToolDescriptors } from '../../../../src/plugins/openapi/openapi-descriptors.js';
import { openApiPluginFactory } from '../../../../src/plugins/openapi/openapi-plugin.js';
import type { Plugin, PluginContext } from '../../../../src/plugins/plugin.js';
import { PluginRegistry } from '../../../../src/plugins/registry.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { MemoryTransport } from '../../../../src/transport/memory-transport.js';
import { Worker } from '../../../../src/worker/worker.js';
import { asServed, captureLogger, entry } from '../../../support/harness.js';
import { API_KEY, CLIENT_ID, CLIENT_SECRET, startItemsApi, type ItemsApi } from '../../../support/items-api.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';

const DOC = fileURLToPath(new URL('./items-api.yaml', import.meta.url));
const NAMES: Record<string, string[]> = {
  'api.test': ['127.0.0.1'],
  'other.test': ['127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'mixed.test': ['127.0.0.1', '10.1.2.3'],
};
const resolved: string[] = [];
const resolver: Resolver = async (host) => {
  resolved.push(host);
  const a = NAMES[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return a;
};

/** Every connection attempt; any beyond loopback is refused before a socket opens. */
const dialled: string[] = [];
// eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be put back in afterAll, and called meanwhile with .apply(this socket)
const realConnect = net.Socket.prototype.connect;
/** What the plugins counted besides calls (retries, tokens), as `<service> <event>`. */
const events: string[] = [];

let api: ItemsApi;
let transport: MemoryTransport;
let worker: Worker;
let client: ToolClient;
let blobDir: string;
const plugins = new Map<string, Plugin>();

function svc(id: string, plugin: Record<string, unknown>): ConfigEntry {
  return entry('tool-service', id, {
    id,
    'config-params': ['operation'],
    'request-queue': `non-persistent://tg/request/${id}`,
    'response-queue': 'non-persistent://tg/response/openapi',
    plugin,
  });
}

function answerTool(service: string, name: string, extra: Record<string, unknown> = {}): ConfigEntry {
  return entry('tool', `${service}-${name}`, {
    name: `${service}-${name}`,
    service,
    operation: name,
    'plugin-options': { method: 'get', path: `/answers/${name}` },
    ...extra,
  });
}

beforeAll(async () => {
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const o = args[0];
    const host = Array.isArray(o)
      ? (o[0] as { host?: string }).host
      : typeof o === 'object' && o !== null
        ? (o as { host?: string }).host
        : (args[1] as string | undefined);
    dialled.push(String(host));
    if (!host || !/^(127\.|::1$|::ffff:127\.)/.test(host)) throw new Error(`test guard: refused a connection to ${String(host)}`);
    return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  };

  api = await startItemsApi();
  blobDir = await mkdtemp(join(tmpdir(), 'toolwire-openapi-blobs-'));
  const base = `http://api.test:${api.port}/v1`;
  const { model } = await loadApi(DOC);
  const imported = openApiToolDescriptors(model.operations, model.securitySchemes, { service: 'items', prefix: '' }).map((d) =>
    entry('tool', String(d['name']), d),
  );
  const loopback = ['127.0.0.0/8'];
  const entries: ConfigEntry[] = [
    svc('items', {
      kind: 'openapi',
      server: base,
      'allow-private': loopback,
      auth: { type: 'api-key', in: 'header', name: 'X-Api-Key', prefix: 'custom', value: 'env:ITEMS_KEY' },
      'read-timeout-ms': 1_500,
      'max-response-bytes': 100_000,
    }),
    ...imported,
    ...['limited', 'busy', 'patient', 'moved', 'away', 'missing', 'denied', 'broken', 'png', 'text', 'empty', 'big', 'number', 'hang'].map((n) =>
      answerTool('items', n),
    ),
    svc('bearer', { kind: 'openapi', server: base, 'allow-private': loopback, auth: { type: 'api-key', value: 'env:ITEMS_KEY' } }),
    entry('tool', 'bearer-echo', { name: 'bearer-echo', service: 'bearer', operation: 'echo', 'plugin-options': { method: 'get', path: '/echo' } }),
    svc('query', { kind: 'openapi', server: base, 'allow-private': loopback, auth: { type: 'api-key', in: 'query', name: 'key', value: 'env:ITEMS_KEY' } }),
    entry('tool', 'query-echo', { name: 'query-echo', service: 'query', operation: 'echo', 'plugin-options': { method: 'get', path: '/echo' } }),
    svc('basic', { kind: 'openapi', server: base, 'allow-private': loopback, auth: { type: 'basic', username: 'ann', password: 'env:ITEMS_KEY' } }),
    entry('tool', 'basic-echo', { name: 'basic-echo', service: 'basic', operation: 'echo', 'plugin-options': { method: 'get', path: '/echo' } }),
    svc('oauth', {
      kind: 'openapi',
      server: base,
      'allow-private': loopback,
      auth: {
        type: 'oauth2-client-credentials',
        'token-url': `http://api.test:${api.port}/oauth/token`,
        'client-id': CLIENT_ID,
        'client-secret': 'env:ITEMS_CLIENT_SECRET',
        scopes: ['read'],
      },
    }),
    entry('tool', 'oauth-secure', { name: 'oauth-secure', service: 'oauth', operation: 'secure', 'plugin-options': { method: 'get', path: '/secure' } }),
    // Allowed host, but its name resolves to the cloud metadata address.
    svc('metadata', { kind: 'openapi', server: `http://metadata.test:${api.port}/v1`, 'allow-private': loopback }),
    entry('tool', 'metadata-echo', { name: 'metadata-echo', service: 'metadata', operation: 'echo', 'plugin-options': { method: 'get', path: '/echo' } }),
    svc('mixed', { kind: 'openapi', server: `http://mixed.test:${api.port}/v1`, 'allow-private': loopback }),
    entry('tool', 'mixed-echo', { name: 'mixed-echo', service: 'mixed', operation: 'echo', 'plugin-options': { method: 'get', path: '/echo' } }),
    // No allow-private at all: loopback itself is refused.
    svc('strict', { kind: 'openapi', server: base }),
    entry('tool', 'strict-echo', { name: 'strict-echo', service: 'strict', operation: 'echo', 'plugin-options': { method: 'get', path: '/echo' } }),
  ];
  const { log } = captureLogger('warn');
  const ctx: PluginContext = {
    log,
    configDir: tmpdir(),
    secrets: loadSecrets({ ITEMS_KEY: API_KEY, ITEMS_CLIENT_SECRET: CLIENT_SECRET }),
    settings: { OPENAPI_BLOB_DIR: blobDir },
    resolve: resolver,
  };
  const registry = new PluginRegistry().register(openApiPluginFactory);
  const catalog = await buildCatalog(entries, registry, ctx, { policy: new ExecPolicy('directory') });
  for (const s of catalog.services.values())
    plugins.set(s.id, await (await registry.load('openapi'))!.create(asServed(s), { ...ctx, events: { count: (e) => void events.push(`${s.id} ${e}`) } }));
  transport = new MemoryTransport();
  worker = await Worker.create({ transport, catalog, createPlugin: async (s) => plugins.get(s.id), log, limits: { shutdownGraceMs: 2000 } });
  await worker.start();
  client = new ToolClient(transport);
}, 30_000);

afterAll(async () => {
  net.Socket.prototype.connect = realConnect;
  await client?.close();
  await worker?.stop(500);
  for (const p of plugins.values()) await p.close?.();
  await transport?.close();
  await api?.close();
  await rm(blobDir, { recursive: true, force: true });
});

function call(service: string, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  return client.call({
    requestQueue: `non-persistent://tg/request/${service}`,
    responseQueue: 'non-persistent://tg/response/openapi',
    tool,
    config: {},
    arguments: args,
    timeoutMs: 20_000,
  });
}

async function callJson(service: string, tool: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  return JSON.parse(await call(service, tool, args)) as Record<string, unknown>;
}

async function failure(p: Promise<unknown>): Promise<ToolResponseError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolResponseError);
  return err as ToolResponseError;
}

describe('parameters and bodies', () => {
  it('puts path, query, header and cookie arguments where the operation declares them, with the key the model never sees', async () => {
    const r = await callJson('items', 'getItem', { itemId: 'a b/c', verbose: true, tag: ['x', 'y'], 'X-Trace': 't-1', session: 's 1' });
    expect(r['rawPath']).toBe('/v1/items/a%20b%2Fc');
    expect(r['query']).toEqual([
      ['verbose', 'true'],
      ['tag', 'x'],
      ['tag', 'y'],
    ]);
    expect(r['headers']).toMatchObject({ 'x-trace': 't-1', cookie: 'session=s%201', 'x-api-key': API_KEY });
  });

  it('does not let a path argument step out of its segment', async () => {
    const err = await failure(call('items', 'getItem', { itemId: '..' }));
    expect(err.type).toBe('invalid-arguments');
    const r = await callJson('items', 'getItem', { itemId: '../../admin' });
    expect(r['rawPath']).toBe('/v1/items/..%2F..%2Fadmin');
  });

  it('sends an object body as JSON, nested objects whole, read-only fields left out', async () => {
    const r = await callJson('items', 'createItem', { name: 'lamp', size: 'large', dims: { w: 2, h: 3 } });
    expect(r['method']).toBe('POST');
    expect((r['headers'] as Record<string, string>)['content-type']).toBe('application/json');
    expect(JSON.parse(r['body'] as string)).toEqual({ name: 'lamp', size: 'large', dims: { w: 2, h: 3 } });
  });

  it('sends form-urlencoded and multipart bodies, a body field named like a parameter renamed', async () => {
    const f = await callJson('items', 'updateItemForm', { itemId: '9', name: 'n 1', body_itemId: 'other' });
    expect(f['path']).toBe('/v1/items/9/form');
    expect((f['headers'] as Record<string, string>)['content-type']).toBe('application/x-www-form-urlencoded');
    expect(new URLSearchParams(f['body'] as string).get('name')).toBe('n 1');
    expect(new URLSearchParams(f['body'] as string).get('itemId')).toBe('other');
    const m = await callJson('items', 'upload', { note: 'hello', file: 'file text' });
    expect((m['headers'] as Record<string, string>)['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(m['body']).toContain('name="note"');
    expect(m['body']).toContain('file text');
  });

  it('sends a text body as it is, for an operation without an operationId', async () => {
    const r = await callJson('items', 'put_notes', { body: 'line one' });
    expect(r).toMatchObject({ method: 'PUT', path: '/v1/notes', body: 'line one' });
    expect((r['headers'] as Record<string, string>)['content-type']).toBe('text/plain');
  });
});

describe('auth, from the worker secrets only', () => {
  it('sends an API key as a bearer token, in the query, or HTTP basic', async () => {
    expect(((await callJson('bearer', 'bearer-echo'))['headers'] as Record<string, string>)['authorization']).toBe(`Bearer ${API_KEY}`);
    expect((await callJson('query', 'query-echo'))['query']).toEqual([['key', API_KEY]]);
    expect(((await callJson('basic', 'basic-echo'))['headers'] as Record<string, string>)['authorization']).toBe(
      `Basic ${Buffer.from(`ann:${API_KEY}`).toString('base64')}`,
    );
  });

  it('fetches an OAuth2 client-credentials token once, and again after the API refuses it', async () => {
    const before = api.tokenFetches;
    expect(await callJson('oauth', 'oauth-secure')).toMatchObject({ ok: true });
    expect(await callJson('oauth', 'oauth-secure')).toMatchObject({ ok: true });
    expect(api.tokenFetches).toBe(before + 1);
    api.validToken = 'rotated-by-the-server';
    expect(await callJson('oauth', 'oauth-secure')).toMatchObject({ ok: true });
    expect(api.tokenFetches).toBe(before + 2);
    expect(events.filter((e) => e === 'oauth token')).toHaveLength(api.tokenFetches);
  });
});

describe('answers', () => {
  it('retries a 429 as long as Retry-After asks, then answers', async () => {
    expect(await callJson('items', 'items-limited')).toEqual({ answered: 3 });
    expect(events.filter((e) => e === 'items retry')).toHaveLength(2);
  });

  it('answers rate-limited or unavailable once the retries are spent or the wait is too long', async () => {
    const before = api.seen.filter((s) => s.endsWith('/busy')).length;
    const busy = await failure(call('items', 'items-busy'));
    expect(busy.type).toBe('unavailable');
    expect(busy.message).toBe('HTTP 503 Service Unavailable: try later');
    expect(api.seen.filter((s) => s.endsWith('/busy')).length - before).toBe(3);
    const patient = await failure(call('items', 'items-patient'));
    expect(patient.type).toBe('rate-limited');
    expect(patient.message).toContain('come back tomorrow');
  });

  it('maps 4xx and 5xx answers, bounded, with the key masked', async () => {
    const missing = await failure(call('items', 'items-missing'));
    expect(missing.type).toBe('tool-service-error');
    expect(missing.message.startsWith('HTTP 404 Not Found: no item for key')).toBe(true);
    expect(missing.message).not.toContain(API_KEY);
    expect(missing.message.length).toBeLessThan(600);
    expect((await failure(call('items', 'items-denied'))).type).toBe('unauthorized');
    expect((await failure(call('items', 'items-broken'))).message).toBe('HTTP 500 Internal Server Error: it broke');
  });

  it('gives JSON as its text (big numbers intact), text as text, no content in words, files stored', async () => {
    expect(await call('items', 'items-number')).toBe('{"id": 12345678901234567890}');
    expect(await call('items', 'items-text')).toBe('plain words');
    expect(await call('items', 'items-empty')).toBe('HTTP 204 No Content, no content');
    const png = await call('items', 'items-png');
    expect(png).toMatch(/^\[file: image\/png, 8 bytes, saved to /);
    const [file] = await readdir(blobDir);
    expect((await stat(join(blobDir, file!))).size).toBe(8);
  });

  it('bounds the response size and the wait for an answer', async () => {
    expect((await failure(call('items', 'items-big'))).message).toContain('max-response-bytes');
    expect((await failure(call('items', 'items-hang'))).type).toBe('timeout');
  });
});

describe('request forgery', () => {
  it('follows a redirect on the same host and refuses one to another host, which is never asked', async () => {
    expect((await callJson('items', 'items-moved'))['path']).toBe('/v1/items/7');
    const seen = api.seen.length;
    const err = await failure(call('items', 'items-away'));
    expect(err.message).toContain('redirected to another host');
    expect(api.seen.slice(seen)).toEqual(['GET /v1/answers/away']);
  });

  it('refuses a name that resolves to a link-local address, or to one private address among others, before any socket', async () => {
    dialled.length = 0;
    const err = await failure(call('metadata', 'metadata-echo'));
    expect(err.message).toBe('request refused: host metadata.test resolves to 169.254.169.254, a linkLocal address, which is not allowed (see allow-private)');
    expect(resolved).toContain('metadata.test');
    const mixed = await failure(call('mixed', 'mixed-echo'));
    expect(mixed.message).toContain('resolves to 10.1.2.3, a private address');
    expect(dialled).toEqual([]);
  });

  it('refuses loopback itself unless the service allows it', async () => {
    const err = await failure(call('strict', 'strict-echo'));
    expect(err.message).toContain('resolves to 127.0.0.1, a loopback address');
  });
});
