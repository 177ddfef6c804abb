import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Dify's plugin daemon that "crashes" under every invocation: it reads the
 * request, then drops the connection without a response, as a daemon process dying in the
 * middle of a call does. Counts the calls it took.
 */
export class CrashingDaemon {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly counter: { calls: number },
  ) {}

  get calls(): number {
    return this.counter.calls;
  }

  static async start(): Promise<CrashingDaemon> {
    const counter = { calls: 0 };
    const server = createServer((req) => {
      counter.calls++;
      req.resume();
      req.once('end', () => req.socket.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    return new CrashingDaemon(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counter);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
