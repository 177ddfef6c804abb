import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AddressGuard } from '../../../src/net/address-guard.js';
import { guardedConnector } from '../../../src/net/guarded-connector.js';

/** What the connector hands its callback: a socket, or the error. */
function connect(connector: ReturnType<typeof guardedConnector>, hostname: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) =>
    connector(
      { hostname, host: hostname, port: String(port), protocol: 'http:', servername: undefined, localAddress: null, httpSocket: undefined },
      (err, socket) => (err ? reject(err) : resolve(socket)),
    ),
  );
}

describe('guardedConnector', () => {
  let server: Server;
  let port: number;
  beforeEach(async () => {
    server = createServer((s) => s.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    vi.useRealTimers();
    await new Promise((resolve) => server.close(resolve));
  });

  it('dials an allowed address and clears its lookup timer', async () => {
    // The lookup's timer is the one set for the whole connect timeout (undici keeps timers of its own).
    const set = vi.spyOn(globalThis, 'setTimeout');
    const cleared = vi.spyOn(globalThis, 'clearTimeout');
    const connector = guardedConnector(new AddressGuard({ allowPrivate: ['127.0.0.0/8'] }), { connectTimeoutMs: 12_345 });
    const socket = await connect(connector, '127.0.0.1', port);
    expect(socket.remoteAddress).toBe('127.0.0.1');
    socket.destroy();
    const lookup = set.mock.calls.findIndex(([, ms]) => ms === 12_345);
    expect(lookup).toBeGreaterThanOrEqual(0);
    expect(cleared).toHaveBeenCalledWith(set.mock.results[lookup]!.value);
  });

  it('hands a dial that throws to its callback instead of rejecting unhandled', async () => {
    const connector = guardedConnector(new AddressGuard({ allowPrivate: ['127.0.0.0/8'] }), { connectTimeoutMs: 5_000 });
    await expect(connect(connector, '127.0.0.1', -1)).rejects.toThrow(/port/i);
  });

  it('calls back once, even when its callback throws', async () => {
    const refused = new AddressGuard({}, () => Promise.reject(new Error('no such host')));
    let calls = 0;
    let resolveCalled: () => void = () => undefined;
    const called = new Promise<void>((resolve) => (resolveCalled = resolve));
    guardedConnector(refused, { connectTimeoutMs: 5_000 })(
      { hostname: 'gone.test', host: 'gone.test', port: String(port), protocol: 'http:', servername: undefined, localAddress: null, httpSocket: undefined },
      () => {
        calls++;
        resolveCalled();
        throw new Error('a callback that throws');
      },
    );
    await called;
    // The trailing catch has run by the time a timer fires.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(calls).toBe(1);
  });

  it('gives up on a lookup that outlasts the connect timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const never = new AddressGuard({}, () => new Promise<string[]>(() => undefined));
    const attempt = connect(guardedConnector(never, { connectTimeoutMs: 5_000 }), 'slow.test', port);
    const failed = expect(attempt).rejects.toThrow(/connect timeout: no address for slow.test within 5000 ms/);
    await vi.advanceTimersByTimeAsync(5_000);
    await failed;
  });
});
