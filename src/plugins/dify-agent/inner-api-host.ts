import type { Logger } from 'pino';
import { ConfigError } from '../../errors.js';
import { InnerApiServer } from './inner-api-server.js';

interface Held {
  readonly server: InnerApiServer;
  readonly key: string;
  readonly started: Promise<unknown>;
  users: number;
}

/**
 * The inner API is one listener per worker (the daemon has one DIFY_INNER_API_URL), shared by
 * every dify-agent service: held while any of them runs, closed with the last.
 */
const held = new Map<string, Held>();

export interface InnerApiLease {
  readonly server: InnerApiServer;
  release(): Promise<void>;
}

export async function acquireInnerApi(options: { host: string; port: number; key: string; log: Logger }): Promise<InnerApiLease> {
  const id = `${options.host}:${options.port}`;
  let h = held.get(id);
  if (h && h.key !== options.key) throw new ConfigError([`the inner API on ${id} already runs with another key`]);
  if (!h) {
    const server = new InnerApiServer(options);
    h = { server, key: options.key, started: server.start(), users: 0 };
    held.set(id, h);
    h.started.catch(() => held.delete(id));
  }
  h.users++;
  const lease = h;
  try {
    await lease.started;
  } catch (err) {
    lease.users--;
    throw err;
  }
  let released = false;
  return {
    server: lease.server,
    async release() {
      if (released) return;
      released = true;
      if (--lease.users > 0) return;
      held.delete(id);
      await lease.server.close();
    },
  };
}
