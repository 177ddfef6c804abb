import { AsyncLocalStorage } from 'node:async_hooks';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { HOPS_HEADER } from '../../envelope/hops.js';

/**
 * The hop count of the tool call whose requests are being sent. The session's HTTP transport
 * is shared by every call and takes its headers once, at construction: the count of the call
 * in hand travels with the async context from `callTool` to the SDK's fetch instead.
 */
const callHops = new AsyncLocalStorage<number>();

/** Runs `send` with `hops` as the count its HTTP requests carry; undefined: none. */
export function withHops<T>(hops: number | undefined, send: () => T): T {
  return hops === undefined ? send() : callHops.run(hops, send);
}

/** A fetch that adds the hop count of the call it runs for (HOPS_HEADER), when that call came with one. */
export function hopsFetch(base: FetchLike): FetchLike {
  return (url, init) => {
    const hops = callHops.getStore();
    if (hops === undefined) return base(url, init);
    const headers = new Headers(init?.headers);
    headers.set(HOPS_HEADER, String(hops));
    return base(url, { ...init, headers });
  };
}
