import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../src/assembly/app.js';
import { readWorkerSettings } from '../../src/assembly/worker-settings.js';
import { ToolClient, ToolResponseError } from '../../src/client/tool-client.js';
import { loadSecrets } from '../../src/secrets.js';
import { createTransport } from '../../src/assembly/create-transport.js';
import type { Transport } from '../../src/transport/transport.js';
import { pluginErrorEnvelope, text, TRACEBACK_SAMPLE } from '../fakes/dify-wire.js';
import { startFakeDifyDaemon, type FakeDifyDaemon } from '../fakes/fake-dify-daemon.js';
import { captureLogger, uniqueSuffix } from '../support/harness.js';
import { TEST_TRANSPORT } from '../support/transport-under-test.js';

const DAEMON_KEY = 'daemon-key-5f2b9c0e7d';
const SERP_KEY = 'serp-credential-8e41a7c3';

/**
 * A Dify plugin tool through the whole worker over the real broker: the agent's request goes
 * over Pulsar, the worker coerces arguments, adds the worker-side credentials, and calls our
 * byte-faithful fake plugin daemon.
 */
describe('dify-daemon plugin end to end over Pulsar', () => {
  let daemon: FakeDifyDaemon;
  let app: App;
  let agentTransport: Transport;
  let client: ToolClient;
  let dir: string;
  const logs = captureLogger('debug');
  const suffix = uniqueSuffix();
  const requestQueue = `persistent://tg/flow/dify-search-${suffix}`;
  const responseQueue = `persistent://tg/response/dify-search-${suffix}`;
  const responses: string[] = [];

  beforeAll(async () => {
    daemon = await startFakeDifyDaemon({ key: DAEMON_KEY, tenant: 'tenant-1', plugins: ['langgenius/google'] });
    daemon.script('google_search', async (c) => {
      const params = (c.body['data'] as { tool_parameters: { query: string } }).tool_parameters;
      if (params.query === 'explode') return c.event(pluginErrorEnvelope('ValueError', 'upstream refused the query', TRACEBACK_SAMPLE(SERP_KEY)));
      if (params.query === 'auth') return c.event(pluginErrorEnvelope('ToolProviderCredentialValidationError', 'invalid api key', 'tb'));
      await c.message(text(`results for ${params.query}: `));
      await c.message(text('cats are great'));
    });
    dir = await mkdtemp(join(tmpdir(), 'toolwire-dify-'));
    await mkdir(join(dir, 'tool-service'));
    await mkdir(join(dir, 'tool'));
    await writeFile(
      join(dir, 'tool-service', 'dify-search.json'),
      JSON.stringify({
        id: 'dify-search',
        'request-queue': requestQueue,
        'response-queue': responseQueue,
        'config-params': [{ name: 'dify-tool', required: true }],
        plugin: { kind: 'dify-daemon', provider: 'langgenius/google/google', credentials: { serpapi_api_key: 'env:SERPAPI_API_KEY' } },
        subscription: `dify-search-${suffix}`,
      }),
    );
    await writeFile(
      join(dir, 'tool', 'google-search.json'),
      JSON.stringify({
        type: 'tool-service',
        name: 'google-search',
        description: 'Search Google',
        service: 'dify-search',
        'dify-tool': 'google_search',
        arguments: [
          { name: 'query', type: 'string', required: true, description: 'key words' },
          { name: 'num', type: 'number', default: 3, description: 'how many results' },
          { name: 'safe', type: 'boolean', description: 'safe search' },
        ],
        'plugin-options': { tool: 'google_search' },
      }),
    );
    const env = {
      TOOLWIRE_CONFIG_DIR: dir,
      TOOLWIRE_HTTP_PORT: 'off',
      PULSAR_URL: process.env['PULSAR_URL'],
      PULSAR_ADMIN_URL: process.env['PULSAR_ADMIN_URL'],
      TOOLWIRE_TRANSPORT: TEST_TRANSPORT,
      DIFY_DAEMON_URL: daemon.url,
      DIFY_DAEMON_KEY: DAEMON_KEY,
      DIFY_TENANT_ID: 'tenant-1',
      SERPAPI_API_KEY: SERP_KEY,
    };
    const settings = readWorkerSettings(env);
    const secrets = loadSecrets(env);
    const transport = await createTransport({ kind: TEST_TRANSPORT, adminUrl: settings.pulsarAdminUrl, serviceUrl: settings.pulsarUrl, log: logs.log });
    app = await startApp({ settings, transport, secrets, log: logs.log });
    agentTransport = await createTransport({ kind: TEST_TRANSPORT, adminUrl: settings.pulsarAdminUrl, serviceUrl: settings.pulsarUrl, log: logs.log });
    client = new ToolClient(agentTransport);
  });

  afterAll(async () => {
    await client?.close();
    await agentTransport?.close();
    await app?.stop(1000);
    await daemon?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = async (args: Record<string, unknown>) => {
    try {
      const out = await client.call({ requestQueue, responseQueue, config: { 'dify-tool': 'google_search' }, arguments: args, timeoutMs: 30_000 });
      responses.push(out);
      return out;
    } catch (err) {
      if (err instanceof ToolResponseError) responses.push(`${err.type}: ${err.message}`);
      throw err;
    }
  };

  it('reaches the daemon with the documented headers and body, coerced arguments and worker-side credentials', async () => {
    expect(await call({ query: 'cats', num: '5', safe: 'yes' })).toBe('results for cats: cats are great');
    const req = daemon.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/plugin/tenant-1/dispatch/tool/invoke');
    expect(req.headers['x-api-key']).toBe(DAEMON_KEY);
    expect(req.headers['x-plugin-id']).toBe('langgenius/google');
    expect(req.headers['content-type']).toBe('application/json');
    const body = JSON.parse(req.body) as { data: Record<string, unknown> } & Record<string, unknown>;
    // message_id carries the request's id: the idempotency key the plugin reads (docs/delivery.md).
    expect(body).toMatchObject({ conversation_id: null, app_id: null, message_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(body.data).toEqual({
      provider: 'google',
      tool: 'google_search',
      credentials: { serpapi_api_key: SERP_KEY },
      credential_type: 'api-key',
      tool_parameters: { query: 'cats', num: 5, safe: true },
    });
  });

  it("answers plugin errors with Dify's agent texts and no traceback", async () => {
    await expect(call({ query: 'explode' })).rejects.toThrow(/tool invoke error: .*upstream refused the query/);
    await expect(call({ query: 'auth' })).rejects.toThrow('Please check your tool provider credentials');
  });

  it('never puts a credential, the daemon key or a traceback in a response or a log line', () => {
    expect(responses.length).toBeGreaterThanOrEqual(3);
    const everything = [...responses, ...logs.lines()];
    for (const line of everything) {
      expect(line).not.toContain(SERP_KEY);
      expect(line).not.toContain(DAEMON_KEY);
    }
    for (const r of responses) expect(r).not.toMatch(/Traceback|search\.py/);
  });
});
