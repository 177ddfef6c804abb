import { Agent, fetch as undiciFetch } from 'undici';
import { AddressRefusedError, type AddressGuard } from './address-guard.js';
import { guardedConnector } from './guarded-connector.js';

/** The WHATWG fetch signature, as clients that take a fetch (the MCP SDK) call it. */
export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** A fetch through a guard, and how to close its connections. */
export interface GuardedFetch {
  readonly fetch: Fetch;
  close(): Promise<void>;
}

/**
 * fetch, but only to what `guard` allows: the URL is checked before anything is sent, and the
 * connection dials only an address the guard accepts at connect time (so a name that resolves
 * to a private address, now or after a rebinding, is refused). A refusal is thrown as the
 * AddressRefusedError itself, not fetch's bare "fetch failed".
 */
export function guardedFetch(guard: AddressGuard, options: { connectTimeoutMs: number }): GuardedFetch {
  const agent = new Agent({ connect: guardedConnector(guard, { connectTimeoutMs: options.connectTimeoutMs }) });
  return {
    fetch: async (url, init) => {
      guard.checkUrl(url);
      try {
        // undici's own fetch with its own Agent: Node's bundled fetch is another undici version.
        return await undiciFetch(url, { ...(init as object), dispatcher: agent });
      } catch (err) {
        if (err instanceof Error && err.cause instanceof AddressRefusedError) throw err.cause;
        throw err;
      }
    },
    close: () => agent.close(),
  };
}
