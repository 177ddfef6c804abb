import { setTimeout as delay } from 'node:timers/promises';
import { AbortedError } from '../errors.js';
import { PulsarAdminError } from './admin-error.js';
import { PulsarAdminClient, type PulsarAdminOptions } from './admin-client.js';

export interface WaitForBrokerOptions extends PulsarAdminOptions {
  /** Give up after this long; default 120 s. */
  readonly waitMs?: number | undefined;
  /** Pause between attempts; default 1 s. */
  readonly intervalMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Poll `GET /admin/v2/clusters` until the broker names at least one cluster. Refusals that
 * retrying cannot fix (401, 403, 404...) end the wait at once.
 */
export async function waitForBroker(adminUrl: string, opts: WaitForBrokerOptions = {}): Promise<string[]> {
  const client = new PulsarAdminClient(adminUrl, opts);
  const waitMs = opts.waitMs ?? 120_000;
  const intervalMs = opts.intervalMs ?? 1_000;
  const deadline = Date.now() + waitMs;
  let last: unknown;
  for (;;) {
    try {
      const clusters = await client.listClusters(opts.signal);
      if (clusters.length > 0) return clusters;
      last = new PulsarAdminError('the broker reports no cluster yet', { call: 'GET /admin/v2/clusters' });
    } catch (err) {
      if (!(err instanceof PulsarAdminError) || !err.retriable) throw err;
      last = err;
    }
    if (Date.now() + intervalMs > deadline) {
      throw new PulsarAdminError(
        `the broker at ${client.adminUrl} was not ready within ${waitMs} ms: ${last instanceof Error ? last.message : String(last)}`,
        { call: 'GET /admin/v2/clusters' },
        { cause: last },
      );
    }
    try {
      await delay(intervalMs, undefined, { signal: opts.signal });
    } catch (err) {
      throw new AbortedError('waiting for the broker was cancelled', { cause: err });
    }
  }
}
