import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatingFetch } from '../../../../src/plugins/mcp/isolating-fetch.js';

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).write('data: open\n\n');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('isolatingFetch', () => {
  it('leaves one listener on a shared signal however many requests use it (plain fetch leaves one per request)', async () => {
    const shared = new AbortController();
    const f = isolatingFetch();
    for (let n = 0; n < 50; n++) expect(await (await f(`${base}/`, { signal: shared.signal })).json()).toEqual({ ok: true });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    const plain = new AbortController();
    for (let n = 0; n < 50; n++) await (await fetch(`${base}/`, { signal: plain.signal })).json();
    expect(getEventListeners(plain.signal, 'abort').length).toBeGreaterThan(1);
  });

  it('still aborts a response being read when the shared signal aborts', async () => {
    const shared = new AbortController();
    const res = await isolatingFetch()(`${base}/hang`, { signal: shared.signal });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: open\n\n');
    const pending = reader.read();
    shared.abort(new Error('session closed'));
    await expect(pending).rejects.toThrow();
  });
});
