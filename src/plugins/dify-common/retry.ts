import type { Logger } from 'pino';
import { isRetriable } from '../../errors.js';
import { abortError } from '../../async/abort-error.js';
import { sleep } from '../../async/sleep.js';

export interface RetryPolicy {
  /** Tries in all, the first included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 10_000 };

/** "Full jitter": a random wait up to the exponential bound, so retrying callers spread out. */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const bound = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * bound);
}

/**
 * Run a streaming attempt, retrying a retriable failure (rate limit, unreachable backend)
 * only while nothing has been passed on yet: once text went out, a second run would repeat
 * it, and a tool that already ran may have acted. Programming errors are never retried.
 */
export async function* withRetry(
  attempt: (attemptNumber: number) => AsyncIterable<string>,
  opts: { policy: RetryPolicy; signal: AbortSignal; log: Logger; onRetry?: () => void },
): AsyncGenerator<string> {
  for (let n = 1; ; n++) {
    let yielded = false;
    try {
      for await (const chunk of attempt(n)) {
        yielded = true;
        yield chunk;
      }
      return;
    } catch (err) {
      if (opts.signal.aborted) throw abortError(opts.signal);
      if (yielded || !isRetriable(err) || n >= opts.policy.maxAttempts) throw err;
      const delayMs = backoffDelayMs(n - 1, opts.policy);
      opts.log.warn({ err, attempt: n, delayMs }, 'retriable failure; trying again');
      opts.onRetry?.();
      await sleep(delayMs, opts.signal);
    }
  }
}
