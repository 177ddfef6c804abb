import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { RateLimitedError, ToolFailedError } from '../../../../src/errors.js';
import { backoffDelayMs, withRetry } from '../../../../src/plugins/dify-common/retry.js';

const log = pino({ level: 'silent' });
const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

async function collect(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe('withRetry', () => {
  it('retries a retriable failure and passes on the successful try', async () => {
    const tries: number[] = [];
    const out = await collect(
      withRetry(
        async function* (n) {
          tries.push(n);
          if (n < 3) throw new RateLimitedError('busy');
          yield 'ok';
        },
        { policy, signal: new AbortController().signal, log },
      ),
    );
    expect(out).toEqual(['ok']);
    expect(tries).toEqual([1, 2, 3]);
  });

  it.each([
    ['a non-retriable error', new ToolFailedError('no')],
    ['a programming error', new TypeError('bug')],
  ])('never retries %s', async (_what, error) => {
    let tries = 0;
    const run = collect(
      withRetry(
        async function* () {
          tries++;
          throw error;
        },
        { policy, signal: new AbortController().signal, log },
      ),
    );
    await expect(run).rejects.toBe(error);
    expect(tries).toBe(1);
  });
});

describe('backoffDelayMs', () => {
  it('grows exponentially up to the cap, scaled by the jitter', () => {
    const p = { maxAttempts: 9, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4].map((r) => backoffDelayMs(r, p, () => 0.999999))).toEqual([99, 199, 399, 799, 999]);
    expect(backoffDelayMs(3, p, () => 0)).toBe(0);
  });
});
