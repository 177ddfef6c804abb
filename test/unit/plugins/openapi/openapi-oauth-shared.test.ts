/**
 * The OAuth2 client-credentials token is fetched once for every call that needs it at that
 * moment. Against a real token endpoint on loopback that answers only when the test lets it:
 * one caller giving up must not fail the others, and closing the service ends the fetch.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolwireError } from '../../../../src/errors.js';
import type { Resolver } from '../../../../src/net/address-guard.js';
import { openApiPluginFactory } from '../../../../src/plugins/openapi/openapi-plugin.js';
import { PluginRegistry } from '../../../../src/plugins/registry.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { directPlugins, type DirectPlugins } from '../../../support/direct-plugins.js';
import { captureLogger, entry } from '../../../support/harness.js';

const TOKEN = 'tok-shared-51c2';
const resolve: Resolver = async (host) => (host === 'api.test' ? ['127.0.0.1'] : []);

/** A token endpoint that holds each token request until released, and an API that wants the token. */
interface SlowTokenApi {
  readonly port: number;
  /** Token requests received, and how many of them the client hung up on. */
  readonly tokenRequests: IncomingMessage[];
  hungUp: number;
  /** Answer every held token request. */
  release(): void;
  close(): Promise<void>;
}

async function startSlowTokenApi(): Promise<SlowTokenApi> {
  const held: ServerResponse[] = [];
  const api: SlowTokenApi = {
    port: 0,
    tokenRequests: [],
    hungUp: 0,
    release: () => {
      for (const res of held.splice(0))
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 }));
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server: Server = createServer((req, res) => {
    if (req.url === '/oauth/token') {
      api.tokenRequests.push(req);
      res.once('close', () => {
        if (!res.writableFinished) api.hungUp++;
      });
      held.push(res);
      return;
    }
    const ok = req.headers.authorization === `Bearer ${TOKEN}`;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(JSON.stringify({ ok }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  Object.assign(api, { port: (server.address() as AddressInfo).port });
  return api;
}

async function until(what: string, done: () => boolean, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function failure(p: Promise<unknown>): Promise<ToolwireError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolwireError);
  return err as ToolwireError;
}

let api: SlowTokenApi | undefined;
let plugins: DirectPlugins | undefined;

async function start(): Promise<{ api: SlowTokenApi; plugins: DirectPlugins }> {
  api = await startSlowTokenApi();
  const base = `http://api.test:${api.port}`;
  const entries = [
    entry('tool-service', 'oauth', {
      id: 'oauth',
      'config-params': ['operation'],
      'request-queue': 'non-persistent://tg/request/oauth',
      'response-queue': 'non-persistent://tg/response/openapi',
      plugin: {
        kind: 'openapi',
        server: base,
        'allow-private': ['127.0.0.0/8'],
        auth: { type: 'oauth2-client-credentials', 'token-url': `${base}/oauth/token`, 'client-id': 'c', 'client-secret': 'env:SECRET' },
      },
    }),
    entry('tool', 'secure', { name: 'secure', service: 'oauth', operation: 'secure', 'plugin-options': { method: 'get', path: '/secure' } }),
  ];
  plugins = await directPlugins(entries, new PluginRegistry().register(openApiPluginFactory), {
    log: captureLogger('warn').log,
    configDir: tmpdir(),
    secrets: loadSecrets({ SECRET: 's' }),
    settings: {},
    resolve,
  });
  return { api, plugins };
}

afterEach(async () => {
  await plugins?.close();
  await api?.close();
  plugins = api = undefined;
});

describe('the shared OAuth2 token fetch', () => {
  it('goes on for the other calls when the call that started it is cancelled', async () => {
    const { api, plugins } = await start();
    const first = new AbortController();
    const cancelled = plugins.call('secure', {}, first.signal);
    const waiting = plugins.call('secure');
    await until('the token request', () => api.tokenRequests.length === 1);
    first.abort();
    expect((await failure(cancelled)).code).toBe('aborted');
    api.release();
    expect(JSON.parse(await waiting)).toEqual({ ok: true });
    expect(api.tokenRequests).toHaveLength(1);
    expect(api.hungUp).toBe(0);
  });

  it('ends when the service closes, though no call waits for it any more', async () => {
    const { api, plugins } = await start();
    const only = new AbortController();
    const cancelled = plugins.call('secure', {}, only.signal);
    await until('the token request', () => api.tokenRequests.length === 1);
    only.abort();
    expect((await failure(cancelled)).code).toBe('aborted');
    // The endpoint never answers: close must not wait for it.
    await plugins.close();
    await until('the token request to be hung up on', () => api.hungUp === 1);
  });
});
