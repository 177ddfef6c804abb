import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayConfigApi } from '../../../src/config/trustgraph/gateway-config-api.js';
import { TrustGraphConfigStore } from '../../../src/config/trustgraph/trustgraph-store.js';
import { ConfigServiceError } from '../../../src/errors.js';

/** An HTTP server that answers each POST with what `answer` returns, and keeps what it was sent. */
async function server(
  answer: (body: unknown, req: IncomingMessage) => { status?: number; body: unknown },
): Promise<{ url: string; seen: { path: string; auth: string | undefined; body: unknown }[]; close: () => Promise<void> }> {
  const seen: { path: string; auth: string | undefined; body: unknown }[] = [];
  const s: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as unknown;
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      const a = answer(body, req);
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, seen, close: () => new Promise((resolve) => s.close(() => resolve())) };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('GatewayConfigApi', () => {
  it('posts the request to api/v1/config with the bearer token, as tg-put-config-item does', async () => {
    const srv = await server(() => ({
      body: { version: 3, values: [{ type: 'tool', key: 'a', value: '{"name":"a"}', workspace: '' }], directory: [], config: {}, error: null },
    }));
    close = srv.close;
    const store = new TrustGraphConfigStore(new GatewayConfigApi(srv.url.replace(/\/$/, ''), 's3cret'), 'ws1');
    const { version, entries } = await store.read(['tool']);
    expect(version).toBe(3);
    expect(entries).toEqual([{ type: 'tool', key: 'a', value: { name: 'a' }, source: 'trustgraph:ws1/tool/a' }]);
    expect(srv.seen).toEqual([{ path: '/api/v1/config', auth: 'Bearer s3cret', body: { operation: 'getvalues', workspace: 'ws1', type: 'tool' } }]);
  });

  it('says what went wrong: refused credentials, the gateway’s own errors, an unreachable gateway', async () => {
    const srv = await server((body) =>
      (body as { operation: string }).operation === 'list'
        ? { status: 401, body: { error: 'auth failure' } }
        : { body: { error: { type: 'gateway-error', message: "'key'" } } },
    );
    close = srv.close;
    const store = new TrustGraphConfigStore(new GatewayConfigApi(srv.url, undefined), 'default');
    await expect(store.keys('tool')).rejects.toThrow(/refused the credentials \(HTTP 401\); give a token/);
    await expect(store.get('tool', 'x')).rejects.toThrow(/refused get: gateway-error: 'key'/);
    const down = new GatewayConfigApi('http://127.0.0.1:9/', undefined, 2000);
    await expect(down.request({ operation: 'list', workspace: 'default', type: 'tool' })).rejects.toBeInstanceOf(ConfigServiceError);
  });

  it('takes only http(s) URLs and never shows credentials embedded in one', () => {
    expect(() => new GatewayConfigApi('file:///etc/passwd', undefined)).toThrow(/must be http\(s\)/);
    expect(() => new GatewayConfigApi('not a url', undefined)).toThrow(/invalid TrustGraph API URL/);
    expect(new GatewayConfigApi('http://user:pw@tg.example:8888/base', undefined).description).toBe('TrustGraph API gateway at http://tg.example:8888/base/');
  });
});
