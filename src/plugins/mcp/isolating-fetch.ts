import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The requests in flight under each shared signal: one listener on it aborts them all. */
const children = new WeakMap<AbortSignal, Set<AbortController>>();

function childOf(parent: AbortSignal): { own: AbortController; release: () => void } {
  const own = new AbortController();
  let set = children.get(parent);
  if (!set) {
    const created = new Set<AbortController>();
    set = created;
    children.set(parent, created);
    parent.addEventListener(
      'abort',
      () => {
        for (const c of created) c.abort(parent.reason);
        created.clear();
      },
      { once: true },
    );
  }
  if (parent.aborted) own.abort(parent.reason);
  else set.add(own);
  const s = set;
  return { own, release: () => void s.delete(own) };
}

/**
 * The SDK's streamable HTTP client passes one connection-wide AbortSignal to every fetch,
 * and Node's fetch leaves a listener on it per request until garbage collection: a
 * long-lived session gathers thousands (MaxListenersExceededWarning, then memory). Here each
 * request gets a signal of its own; the shared one carries a single listener that aborts
 * those still open, and a request leaves that set once its response body has been read to
 * its end (or it failed).
 */
export function isolatingFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const parent = init?.signal ?? undefined;
    if (!parent) return base(url, init);
    const { own, release } = childOf(parent);
    let res: Response;
    try {
      res = await base(url, { ...init, signal: own.signal });
    } catch (err) {
      release();
      throw err;
    }
    if (!res.body) {
      release();
      return res;
    }
    const body = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: release }));
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
