/**
 * Redirects and TLS of the openapi plugin against a real server on loopback that speaks
 * https (a self-signed certificate the worker trusts through OPENAPI_CA_FILE) and plain http
 * on one port, so a redirect can change the scheme and nothing else.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolwireError } from '../../../../src/errors.js';
import type { Resolver } from '../../../../src/net/address-guard.js';
import { openApiPluginFactory } from '../../../../src/plugins/openapi/openapi-plugin.js';
import { redirectRefusal } from '../../../../src/plugins/openapi/redirect-policy.js';
import type { PluginContext } from '../../../../src/plugins/plugin.js';
import { PluginRegistry } from '../../../../src/plugins/registry.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { directPlugins, type DirectPlugins } from '../../../support/direct-plugins.js';
import { selfSignedCertificate, startDualSchemeServer, type DualSchemeServer } from '../../../support/dual-scheme-server.js';
import { captureLogger, entry } from '../../../support/harness.js';

const KEY = 'k-redirect-7d1e';
const resolve: Resolver = async (host) => (host === 'api.test' ? ['127.0.0.1'] : []);

let dir: string;
let server: DualSchemeServer;
let trusted: DirectPlugins;
let untrusted: DirectPlugins;

function svc(id: string, plugin: Record<string, unknown>) {
  return entry('tool-service', id, {
    id,
    'config-params': ['operation'],
    'request-queue': `non-persistent://tg/request/${id}`,
    'response-queue': 'non-persistent://tg/response/openapi',
    plugin,
  });
}
function get(service: string, name: string, path: string) {
  return entry('tool', name, { name, service, operation: name, 'plugin-options': { method: 'get', path } });
}

async function failure(p: Promise<unknown>): Promise<ToolwireError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolwireError);
  return err as ToolwireError;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwire-tls-'));
  const certificate = await selfSignedCertificate('api.test', dir);
  server = await startDualSchemeServer(certificate, (req, res, scheme) => {
    const origin = (s: string) => `${s}://api.test:${server.port}`;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/down') res.writeHead(302, { location: `${origin('http')}/landing` }).end();
    else if (path === '/up') res.writeHead(301, { location: `${origin('https')}/ok` }).end();
    else if (path === '/other-port') res.writeHead(302, { location: `https://api.test:${server.port + 1}/ok` }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ scheme, path: req.url }));
  });
  const https = `https://api.test:${server.port}`;
  const loopback = ['127.0.0.0/8'];
  const bearer = { type: 'api-key', value: 'env:KEY' };
  const entries = [
    svc('secure', { kind: 'openapi', server: https, 'allow-private': loopback, auth: bearer }),
    get('secure', 'secure-ok', '/ok'),
    get('secure', 'secure-down', '/down'),
    get('secure', 'secure-other-port', '/other-port'),
    svc('query', {
      kind: 'openapi',
      server: https,
      'allow-private': loopback,
      auth: { type: 'api-key', in: 'query', name: 'key', value: 'env:KEY' },
      headers: { 'X-Team-Key': 'env:KEY' },
    }),
    get('query', 'query-down', '/down'),
    svc('plain', { kind: 'openapi', server: `http://api.test:${server.port}`, 'allow-private': loopback, auth: bearer }),
    get('plain', 'plain-up', '/up'),
  ];
  const ctx = (settings: Record<string, string>): PluginContext => ({
    log: captureLogger('warn').log,
    configDir: dir,
    secrets: loadSecrets({ KEY }),
    settings,
    resolve,
  });
  const registry = new PluginRegistry().register(openApiPluginFactory);
  trusted = await directPlugins(entries, registry, ctx({ OPENAPI_CA_FILE: certificate.certFile }));
  untrusted = await directPlugins(entries.slice(0, 2), registry, ctx({}));
}, 30_000);

afterAll(async () => {
  await trusted?.close();
  await untrusted?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('TLS', () => {
  it('trusts the CAs of OPENAPI_CA_FILE, and without it refuses a certificate no CA vouches for', async () => {
    expect(JSON.parse(await trusted.call('secure-ok'))).toEqual({ scheme: 'https', path: '/ok' });
    const err = await failure(untrusted.call('secure-ok'));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/certificate/);
  });

  it('refuses a CA file it cannot use, at load time', async () => {
    const registry = new PluginRegistry().register(openApiPluginFactory);
    const err = await failure(
      directPlugins([svc('s', { kind: 'openapi', server: 'https://api.test/' })], registry, {
        log: captureLogger('warn').log,
        configDir: dir,
        secrets: loadSecrets({}),
        settings: { OPENAPI_CA_FILE: join(dir, 'key.pem') },
        resolve,
      }),
    );
    expect(err.message).toContain(`setting OPENAPI_CA_FILE: cannot use ${join(dir, 'key.pem')}: no PEM certificate in it`);
  });
});

describe('redirects', () => {
  it('refuses a redirect from https to http on the same host and port: no credential travels in clear text', async () => {
    const before = server.seen.length;
    for (const tool of ['secure-down', 'query-down']) {
      const err = await failure(trusted.call(tool));
      expect(err.code).toBe('tool-service-error');
      expect(err.message).toContain('redirected from https to http');
    }
    const seen = server.seen.slice(before);
    // Both asked over https, with their credentials; nothing came over http.
    expect(seen.map((r) => `${r.scheme} ${r.path}`)).toEqual(['https /down', `https /down?key=${KEY}`]);
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.seen.filter((r) => r.scheme === 'http')).toEqual([]);
  });

  it('follows a redirect from http up to https on the same host', async () => {
    const before = server.seen.length;
    expect(JSON.parse(await trusted.call('plain-up'))).toEqual({ scheme: 'https', path: '/ok' });
    expect(server.seen.slice(before).map((r) => `${r.scheme} ${r.path}`)).toEqual(['http /up', 'https /ok']);
  });

  it('refuses a redirect to another port of the same host', async () => {
    expect((await failure(trusted.call('secure-other-port'))).message).toContain('redirected to another port');
  });

  it('compares origins: scheme, host and port', () => {
    const u = (s: string) => new URL(s);
    expect(redirectRefusal(u('https://api.x/a'), u('https://api.x/b'))).toBeUndefined();
    expect(redirectRefusal(u('https://api.x/a'), u('https://api.x:443/b'))).toBeUndefined();
    expect(redirectRefusal(u('http://api.x/a'), u('https://api.x/b'))).toBeUndefined();
    expect(redirectRefusal(u('https://api.x/a'), u('http://api.x/b'))).toContain('from https to http');
    expect(redirectRefusal(u('https://api.x/a'), u('https://api.x:8443/b'))).toContain('another port');
    expect(redirectRefusal(u('https://api.x/a'), u('https://evil.x/b'))).toContain('another host');
    expect(redirectRefusal(u('http://api.x/a'), u('https://evil.x/b'))).toContain('another host');
  });
});
