import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';

/** A stand-in for a worker's gateway: `answer` decides what each invoke gets. */
async function gateway(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const sse = (...events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');

describe('toolwire call through the gateway', () => {
  const open: Server[] = [];
  afterEach(async () => {
    for (const server of open.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  const serve = async (answer: (req: IncomingMessage, res: ServerResponse) => void) => {
    const g = await gateway(answer);
    open.push(g.server);
    return g.port;
  };

  it('finds the worker on TOOLWIRE_HTTP_HOST and TOOLWIRE_HTTP_PORT when no URL is given', async () => {
    let path: string | undefined;
    const port = await serve((req, res) => {
      path = req.url;
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sse({ error: null, response: 'hi', end_of_stream: true }));
    });
    const r = await runCli(['call', 'greet', '--args', '{"name":"Ada"}'], { TOOLWIRE_HTTP_HOST: '127.0.0.1', TOOLWIRE_HTTP_PORT: String(port) });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'hi\n', '']);
    expect(path).toBe('/v1/tools/greet/invoke');
    // A worker listening on every address is reached on loopback.
    const wildcard = await runCli(['call', 'greet'], { TOOLWIRE_HTTP_HOST: '0.0.0.0', TOOLWIRE_HTTP_PORT: String(port) });
    expect(wildcard.stdout).toBe('hi\n');
    // TOOLWIRE_URL, then --url, win over both.
    const named = await runCli(['call', 'greet'], { TOOLWIRE_HTTP_PORT: '1', TOOLWIRE_URL: `http://127.0.0.1:${port}` });
    expect(named.stdout).toBe('hi\n');
  });

  it('says which address it could not reach, in the one error shape', async () => {
    const port = await serve(() => undefined);
    open.pop()!.close();
    const r = await runCli(['call', 'greet'], { TOOLWIRE_HTTP_PORT: String(port) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^unavailable: cannot reach the toolwire gateway at http://127\\.0\\.0\\.1:${port}: .*\\(is 'toolwire run' running`));
  });

  it("prints a gateway's refusal as <type>: <message>, like an error answer", async () => {
    const port = await serve((req, res) => {
      const typed = req.url?.includes('/typed/');
      res
        .writeHead(typed ? 400 : 401, { 'content-type': 'application/json' })
        .end(JSON.stringify(typed ? { error: 'argument city is missing from the call', type: 'invalid-arguments' } : { error: 'no token' }));
    });
    const env = { TOOLWIRE_URL: `http://127.0.0.1:${port}` };
    const typed = await runCli(['call', 'typed'], env);
    expect([typed.code, typed.stdout, typed.stderr]).toEqual([1, '', 'invalid-arguments: argument city is missing from the call\n']);
    const untyped = await runCli(['call', 'other'], env);
    expect([untyped.code, untyped.stderr]).toEqual([1, 'gateway-error: no token (HTTP 401)\n']);
  });

  it('names the field of a gateway event it cannot read, after the text before it', async () => {
    const port = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url?.includes('/garbled/')) return res.end('data: {not json\n\n');
      res.end(sse({ error: null, response: 'partial', end_of_stream: false }, { error: null, response: 'more', end_of_stream: 'yes' }));
    });
    const env = { TOOLWIRE_URL: `http://127.0.0.1:${port}` };
    const shaped = await runCli(['call', 'shaped'], env);
    expect(shaped.code).toBe(1);
    expect(shaped.stdout).toBe('partial\n');
    expect(shaped.stderr).toMatch(/^gateway-error: the gateway sent an event toolwire call cannot read: the response is malformed at end_of_stream: .+\n$/);
    const garbled = await runCli(['call', 'garbled'], env);
    expect([garbled.code, garbled.stdout, garbled.stderr]).toEqual([1, '', 'gateway-error: the gateway sent an event that is not JSON\n']);
  });

  it('says a client timeout is one, not that the gateway is down, before or during the answer', async () => {
    const port = await serve((req, res) => {
      if (req.url?.includes('/silent/')) return;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse({ error: null, response: 'partial', end_of_stream: false }));
    });
    const env = { TOOLWIRE_URL: `http://127.0.0.1:${port}` };
    const silent = await runCli(['call', 'silent', '--timeout-ms', '300'], env);
    expect([silent.code, silent.stderr]).toEqual([1, 'timeout: no answer within 300 ms\n']);
    const slow = await runCli(['call', 'slow', '--timeout-ms', '300'], env);
    expect([slow.code, slow.stdout, slow.stderr]).toEqual([1, 'partial\n', 'timeout: no answer within 300 ms\n']);
  });
});
