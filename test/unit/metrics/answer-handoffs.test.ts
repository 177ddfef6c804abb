/** The answers handed to the broker that a scrape waits for: those before it, and not forever. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AnswerHandoffs } from '../../../src/metrics/answer-handoffs.js';

afterEach(() => vi.useRealTimers());

const state = (p: Promise<void>) => Promise.race([p.then(() => 'settled'), new Promise((r) => setImmediate(() => r('waiting')))]);

describe('a scrape’s wait for answers handed to the broker', () => {
  it('ends once those handed before it have settled, whatever was handed after', async () => {
    const h = new AnswerHandoffs();
    const [a, b] = [h.hand(), h.hand()];
    const scrape = h.settled(10_000);
    const later = h.hand();
    h.settle(b);
    expect(await state(scrape)).toBe('waiting');
    h.settle(a);
    expect(await state(scrape)).toBe('settled');
    h.settle(later);
  });

  it('does not wait when nothing is handed over', async () => {
    expect(await state(new AnswerHandoffs().settled(10_000))).toBe('settled');
  });

  it('gives up at its bound on an answer that never settles', async () => {
    vi.useFakeTimers();
    const h = new AnswerHandoffs();
    h.hand();
    const scrape = h.settled(2_000);
    vi.advanceTimersByTime(2_000);
    await scrape;
    expect(vi.getTimerCount()).toBe(0);
  });
});
