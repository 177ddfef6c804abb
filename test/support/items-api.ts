/**
 * The HTTP server behind test/unit/plugins/openapi/items-api.yaml: a real node:http server on
 * loopback that echoes what it received and plays the answers the plugin must handle.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ItemsApi {
  readonly port: number;
  /** Requests seen, as `METHOD path`. */
  readonly seen: string[];
  /** Token endpoint: fetches made, and the token now valid. */
  tokenFetches: number;
  validToken: string;
  close(): Promise<void>;
}

export const API_KEY = 'k-3f9a1c77e2';
export const CLIENT_ID = 'toolwire-tests';
export const CLIENT_SECRET = 's3cr3t-c1ient';

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
}

export async function startItemsApi(): Promise<ItemsApi> {
  const seen: string[] = [];
  const hits = new Map<string, number>();
  let tokenCounter = 0;
  const api: ItemsApi = {
    port: 0,
    seen,
    tokenFetches: 0,
    validToken: '',
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = await bodyOf(req);
      seen.push(`${req.method} ${url.pathname}`);
      const n = (hits.get(url.pathname) ?? 0) + 1;
      hits.set(url.pathname, n);
      const echo = {
        method: req.method,
        path: url.pathname,
        rawPath: (req.url ?? '').split('?')[0],
        query: [...url.searchParams.entries()],
        headers: {
          'x-trace': req.headers['x-trace'],
          cookie: req.headers.cookie,
          authorization: req.headers.authorization,
          'x-api-key': req.headers['x-api-key'],
          'content-type': req.headers['content-type'],
        },
        body: body.toString('utf8'),
      };
      const p = url.pathname;
      if (p === '/oauth/token') {
        api.tokenFetches++;
        const form = new URLSearchParams(echo.body);
        const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
        if (req.headers.authorization !== basic || form.get('grant_type') !== 'client_credentials') return json(res, 401, { error: 'invalid_client' });
        api.validToken = `tok-${++tokenCounter}`;
        return json(res, 200, { access_token: api.validToken, token_type: 'Bearer', expires_in: 3600, scope: form.get('scope') });
      }
      if (p === '/v1/secure') {
        if (req.headers.authorization !== `Bearer ${api.validToken}`) return json(res, 401, { error: 'invalid_token' });
        return json(res, 200, { ok: true, token: api.validToken });
      }
      if (p === '/v1/answers/limited') {
        // Rate limited twice, then answers.
        if (n <= 2) return json(res, 429, { message: 'slow down' }, { 'retry-after': '1' });
        return json(res, 200, { answered: n });
      }
      if (p === '/v1/answers/busy') return json(res, 503, { message: 'try later' }, { 'retry-after': '0' });
      if (p === '/v1/answers/patient') return json(res, 429, { message: 'come back tomorrow' }, { 'retry-after': '86400' });
      if (p === '/v1/answers/moved') return res.writeHead(302, { location: '/v1/items/7' }).end();
      if (p === '/v1/answers/away') return res.writeHead(302, { location: `http://other.test:${api.port}/v1/items/7` }).end();
      if (p === '/v1/answers/missing')
        return json(res, 404, { error: { message: `no item for key ${String(req.headers['x-api-key'])}${' and more'.repeat(200)}` } });
      if (p === '/v1/answers/denied') return json(res, 403, { message: 'not yours' });
      if (p === '/v1/answers/broken') return res.writeHead(500, { 'content-type': 'text/plain' }).end('it broke');
      if (p === '/v1/answers/png') return res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]));
      if (p === '/v1/answers/text') return res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('plain words');
      if (p === '/v1/answers/empty') return res.writeHead(204).end();
      if (p === '/v1/answers/big') return res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200_000));
      if (p === '/v1/answers/number') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": 12345678901234567890}');
      if (p === '/v1/answers/hang') return; // never answers: the read timeout must end it
      return json(res, 200, echo);
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  (api as { port: number }).port = (server.address() as AddressInfo).port;
  return api;
}
