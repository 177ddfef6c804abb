/**
 * An OpenAPI operation that asks for an idempotency key sends the request's id in the header
 * it names, the same on a redelivery: a real worker on a persistent topic of the memory
 * transport, and a real HTTP server on loopback that answers the first try 503.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import type { ConfigEntry } from '../../../../src/config/config-store.js';
import { encodeRequest } from '../../../../src/envelope/request.js';
import { ConfigError } from '../../../../src/errors.js';
import { openApiPluginFactory } from '../../../../src/plugins/openapi/openapi-plugin.js';
import type { PluginContext } from '../../../../src/plugins/plugin.js';
import { PluginRegistry } from '../../../../src/plugins/registry.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { asServed, captureLogger, entry } from '../../../support/harness.js';
import { startFixture, type Fixture } from '../../../support/worker-fixture.js';

const REQUESTS = 'persistent://tg/flow/payments-request';
const RESPONSES = 'non-persistent://tg/response/payments';

/** A payments API that records each request's headers, and answers 503 to the first `failFirst` tries. */
async function startPaymentsApi(failFirst: number): Promise<{ port: number; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      if (seen.length <= failFirst) res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"busy"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(`{"charged":${seen.length}}`);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

function entries(port: number, pluginOptions: Record<string, unknown>): ConfigEntry[] {
  return [
    entry('tool-service', 'payments', {
      id: 'payments',
      'request-queue': REQUESTS,
      'response-queue': RESPONSES,
      // No retries of the plugin's own: the 503 is nacked, and the broker redelivers the request.
      plugin: { kind: 'openapi', server: `http://127.0.0.1:${port}/v1`, 'allow-private': ['127.0.0.0/8'], retries: 0 },
    }),
    entry('tool', 'charge', {
      name: 'charge',
      service: 'payments',
      arguments: [{ name: 'key', type: 'string' }],
      'plugin-options': { method: 'post', path: '/charges', 'idempotency-header': 'Idempotency-Key', ...pluginOptions },
    }),
  ];
}

describe('openapi idempotency key', () => {
  let api: Awaited<ReturnType<typeof startPaymentsApi>> | undefined;
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    await api?.close();
    fx = undefined;
    api = undefined;
  });

  const { log } = captureLogger('warn');
  const ctx: PluginContext = { log, configDir: tmpdir(), secrets: loadSecrets({}), settings: {} };
  const registry = new PluginRegistry().register(openApiPluginFactory);

  it('sends the request id in the header the operation names, the same on a redelivery, and an argument cannot set it', async () => {
    api = await startPaymentsApi(1);
    const catalog = await buildCatalog(entries(api.port, {}), registry, ctx, { policy: new ExecPolicy('directory') });
    const createPlugin = async () => openApiPluginFactory.create(asServed(catalog.services.get('payments')), ctx);
    fx = await startFixture(catalog, {}, RESPONSES, { nackDelayMs: 10 }, { createPlugin });
    // An undeclared argument named as the header passes through to the plugin, and is never sent.
    const id = await fx.request(REQUESTS, { 'Idempotency-Key': 'chosen-by-the-agent' }, {}, { 'toolwire-tool': 'charge' });
    const answer = await fx.responses.final(id, 10_000);
    expect(answer.at(-1)).toMatchObject({ error: null, response: '{"charged":2}' });
    expect(api.seen.map((headers) => headers['idempotency-key'])).toEqual([id, id]);
  });

  it('refuses a request whose id no header can carry, and calls nothing', async () => {
    api = await startPaymentsApi(0);
    const catalog = await buildCatalog(entries(api.port, {}), registry, ctx, { policy: new ExecPolicy('directory') });
    const createPlugin = async () => openApiPluginFactory.create(asServed(catalog.services.get('payments')), ctx);
    fx = await startFixture(catalog, {}, RESPONSES, { nackDelayMs: 10 }, { createPlugin });
    const id = 'two words';
    await fx.send(REQUESTS, encodeRequest({ config: {}, arguments: {} }), { id });
    const answer = await fx.responses.final(id, 10_000);
    expect(answer.at(-1)?.error).toEqual({
      type: 'invalid-request',
      message: 'the request id cannot be sent as the Idempotency-Key header: an idempotency key must be visible ASCII, without spaces',
    });
    expect(api.seen).toEqual([]);
  });

  it('refuses a tool that binds an argument to the idempotency header', async () => {
    const bound = { parameters: [{ argument: 'key', name: 'idempotency-key', in: 'header' }] };
    const built = buildCatalog(entries(1, bound), registry, ctx, { policy: new ExecPolicy('directory') });
    await expect(built).rejects.toBeInstanceOf(ConfigError);
    await expect(built).rejects.toThrow(
      'plugin-options.parameters[0].name: header Idempotency-Key carries the idempotency key (idempotency-header): no argument may set it',
    );
  });
});
