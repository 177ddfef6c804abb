import { once } from 'node:events';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { serviceDescriptor } from '../../support/descriptors.js';
import { captureLogger } from '../../support/harness.js';
import { waitUntil } from '../../support/pulsar-app.js';

describe('HTTP surface', () => {
  let app: App;
  let base: string;
  beforeAll(async () => {
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: 'config', TOOLWIRE_HTTP_PORT: '0' });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger().log });
    base = `http://${app.http!.host}:${app.http!.port}`;
  });
  afterAll(async () => {
    await app.stop(100);
  });

  it('answers health, readiness and metrics', async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/^toolwire_requests_in_flight\{service="echo-service"\} 0$/m);
  });

  it('describes itself at /openapi.json, with one invoke route per tool carrying its arguments', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, { post?: { requestBody: { content: Record<string, { schema: { properties: { arguments: unknown } } }> } } }>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const args = (tool: string) => doc.paths[`/v1/tools/${tool}/invoke`]!.post!.requestBody.content['application/json']!.schema.properties.arguments;
    expect(args('echo')).toMatchObject({ type: 'object', properties: { text: { type: 'string' }, chunks: { type: 'number' } } });
    expect(args('calculate')).toMatchObject({ properties: { expression: { type: 'string' } }, required: ['expression'] });
  });

  it('lists tools with their model-facing schemas', async () => {
    const body = (await (await fetch(`${base}/v1/tools`)).json()) as { tools: { name: string; input_schema: unknown }[] };
    expect(body.tools.find((t) => t.name === 'calculate')?.input_schema).toEqual({
      type: 'object',
      properties: { expression: { type: 'string', description: 'The expression, e.g. (2 + 3) * 4' } },
      required: ['expression'],
    });
  });

  it('streams a tool call as Server-Sent Events', async () => {
    const res = await fetch(`${base}/v1/tools/echo/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { text: 'hi', chunks: 2 }, stream: true }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')) as unknown);
    expect(events).toEqual([
      { error: null, response: 'hi', end_of_stream: false },
      { error: null, response: 'hi', end_of_stream: false },
      { error: null, response: '', end_of_stream: true },
    ]);
  });

  it('refuses bad calls with a status and a reason', async () => {
    expect((await fetch(`${base}/v1/tools/nope/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
    expect((await fetch(`${base}/v1/tools/echo/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' })).status).toBe(
      400,
    );
    expect(
      (await fetch(`${base}/v1/tools/echo/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"arguments":[1]}' })).status,
    ).toBe(400);
    expect((await fetch(`${base}/v1/tools/%E0%A4%A/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(400);
    const get = await fetch(`${base}/v1/tools/echo/invoke`);
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    const post = await fetch(`${base}/healthz`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET']);
    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
    // The body is what the document says, and the tool's own check runs before anything is published.
    const user = await fetch(`${base}/v1/tools/echo/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"arguments":{"text":"x"},"user":{}}',
    });
    expect([user.status, await user.json()]).toEqual([400, { error: '"user": must be a string', type: 'invalid-request' }]);
    const stream = await fetch(`${base}/v1/tools/echo/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"arguments":{"text":"x"},"stream":"yes"}',
    });
    expect([stream.status, await stream.json()]).toEqual([400, { error: '"stream": must be true or false', type: 'invalid-request' }]);
    const missing = await fetch(`${base}/v1/tools/calculate/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"arguments":{}}',
    });
    // A refusal of the tool's check carries its wire type, as the worker's answer would.
    expect([missing.status, await missing.json()]).toEqual([400, { error: 'argument expression is missing from the call', type: 'invalid-arguments' }]);
  });
});

describe('HTTP surface behind a token, and beyond loopback', () => {
  it('asks for the bearer token on /v1/ and leaves health, readiness and metrics open', async () => {
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: 'config', TOOLWIRE_HTTP_PORT: '0', TOOLWIRE_HTTP_TOKEN: 'env:GATEWAY_TOKEN' });
    const app = await startApp({
      settings,
      transport: new MemoryTransport(),
      secrets: loadSecrets({ GATEWAY_TOKEN: 'open-sesame' }),
      log: captureLogger().log,
    });
    const base = `http://${app.http!.host}:${app.http!.port}`;
    try {
      expect((await fetch(`${base}/v1/tools`)).status).toBe(401);
      expect((await fetch(`${base}/v1/tools`, { headers: { authorization: 'Bearer open-sesamE' } })).status).toBe(401);
      expect(
        (await fetch(`${base}/v1/tools/echo/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"arguments":{"text":"x"}}' }))
          .status,
      ).toBe(401);
      expect((await fetch(`${base}/v1/tools`, { headers: { authorization: 'Bearer open-sesame' } })).status).toBe(200);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/metrics`)).status).toBe(200);
    } finally {
      await app.stop(100);
    }
  });

  it('keeps /v1/ closed when it listens beyond loopback without a token', async () => {
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: 'config', TOOLWIRE_HTTP_PORT: '0', TOOLWIRE_HTTP_HOST: '0.0.0.0' });
    const app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger().log });
    try {
      const r = await fetch(`http://127.0.0.1:${app.http!.port}/v1/tools`);
      expect(r.status).toBe(401);
      expect(((await r.json()) as { error: string }).error).toMatch(/beyond loopback, and has no token: set TOOLWIRE_HTTP_TOKEN/);
      expect((await fetch(`http://127.0.0.1:${app.http!.port}/healthz`)).status).toBe(200);
    } finally {
      await app.stop(100);
    }
  });
});

describe('HTTP surface and web pages', () => {
  let app: App;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-http-'));
    await cp('config', dir, { recursive: true });
    const settings = readSettings({
      TOOLWIRE_CONFIG_DIR: dir,
      TOOLWIRE_HTTP_PORT: '0',
      TOOLWIRE_HTTP_ALLOWED_ORIGINS: 'https://ui.example.com',
      TOOLWIRE_CONFIG_POLL_MS: '100',
    });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger().log });
    base = `http://${app.http!.host}:${app.http!.port}`;
  });
  afterAll(async () => {
    await app.stop(100);
    await rm(dir, { recursive: true, force: true });
  });
  const invoke = (headers: Record<string, string>, body = '{"arguments":{"text":"x"}}') =>
    fetch(`${base}/v1/tools/echo/invoke`, { method: 'POST', headers, body });

  it('takes a call only as JSON: a form or a text/plain body is a request any page may send', async () => {
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const r = await invoke({ 'content-type': type });
      expect([type, r.status, await r.json()]).toEqual([type, 415, { error: 'the body must be JSON, sent as content-type: application/json' }]);
    }
    expect((await invoke({})).status).toBe(415);
    expect((await invoke({ 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
  });

  it('refuses a page of another origin and a rebinding Host on every route, and takes the allowed origin', async () => {
    const foreign = await invoke({ 'content-type': 'application/json', origin: 'https://evil.example' });
    expect([foreign.status, await foreign.json()]).toEqual([
      403,
      { error: 'pages from https://evil.example may not call this server (TOOLWIRE_HTTP_ALLOWED_ORIGINS names the ones that may)' },
    ]);
    for (const path of ['/v1/tools', '/readyz', '/metrics', '/openapi.json']) {
      const rebound = await request(`${base}${path}`, { headers: { host: `rebind.test:${app.http!.port}` } });
      expect([path, rebound.statusCode]).toEqual([path, 403]);
      expect(await rebound.body.text()).toMatch(/does not answer to the host name rebind\.test/);
    }
    expect((await invoke({ 'content-type': 'application/json', origin: 'https://ui.example.com' })).status).toBe(200);
    expect((await invoke({ 'content-type': 'application/json', origin: base })).status).toBe(200);
  });

  it('answers /healthz to a probe that names the service or sends no Host (it reveals nothing)', async () => {
    const named = await request(`${base}/healthz`, { headers: { host: `toolwire-worker:${app.http!.port}` } });
    expect([named.statusCode, await named.body.json()]).toEqual([200, { status: 'ok' }]);
    // HTTP/1.0 without a Host, as a bare probe sends it.
    const socket = connect(app.http!.port, app.http!.host);
    socket.end('GET /healthz HTTP/1.0\r\n\r\n');
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    await once(socket, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('shows readiness problems on loopback', async () => {
    await writeFile(join(dir, 'tool', 'broken.json'), JSON.stringify({ name: 'broken', service: 'no-such-service', description: 'x' }));
    await waitUntil(
      async () => ((await (await fetch(`${base}/readyz`)).json()) as { config?: { rejected?: unknown } }).config?.rejected !== undefined,
      10_000,
      'the change refused',
    );
    await rm(join(dir, 'tool', 'broken.json'));
  });
});

describe('readiness beyond loopback', () => {
  it('gives the status only, and the problems to the bearer of the token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwire-http-'));
    await cp('config', dir, { recursive: true });
    const settings = readSettings({
      TOOLWIRE_CONFIG_DIR: dir,
      TOOLWIRE_HTTP_PORT: '0',
      TOOLWIRE_HTTP_HOST: '0.0.0.0',
      TOOLWIRE_HTTP_TOKEN: 'env:T',
      TOOLWIRE_CONFIG_POLL_MS: '100',
    });
    const app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({ T: 'tok' }), log: captureLogger().log });
    const url = `http://127.0.0.1:${app.http!.port}/readyz`;
    try {
      // A refused descriptor whose problem quotes a URL with a password.
      await writeFile(
        join(dir, 'tool-service', 'leaky.json'),
        JSON.stringify(serviceDescriptor('leaky', { plugin: { kind: 'mcp', transport: 'carrier-pigeon', url: 'http://admin:hunter2@127.0.0.1:1/mcp' } })),
      );
      const detail = async () =>
        (await (await fetch(url, { headers: { authorization: 'Bearer tok' } })).json()) as { config?: { rejected?: { problems: string[] } } };
      await waitUntil(async () => (await detail()).config?.rejected !== undefined, 10_000, 'the change refused');
      const open = await fetch(url);
      expect(open.status).toBe(200);
      expect(await open.json()).toEqual({ status: 'ready', worker: 'running', transport: 'connected' });
      expect((await fetch(url, { headers: { authorization: 'Bearer nope' } })).status).toBe(200);
      expect(JSON.stringify(await (await fetch(url, { headers: { authorization: 'Bearer nope' } })).json())).not.toContain('leaky');
      expect(JSON.stringify((await detail()).config?.rejected?.problems)).toContain('leaky');
    } finally {
      await app.stop(100);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
