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

  /** An answer handed over, a scrape, a second answer, a second scrape. */
  const twoScrapes = () => {
    const h = new AnswerHandoffs();
    const a = h.hand();
    const first = h.settled(10_000);
    const b = h.hand();
    const second = h.settled(10_000);
    return { h, a, b, first, second };
  };

  it('lets each of two scrapes end once what was handed before it has settled', async () => {
    const { h, a, b, first, second } = twoScrapes();
    h.settle(a);
    expect([await state(first), await state(second)]).toEqual(['settled', 'waiting']);
    h.settle(b);
    expect(await state(second)).toBe('settled');
    // The counts are back to none: a third scrape does not wait.
    expect(await state(h.settled(10_000))).toBe('settled');
  });

  it('holds a scrape for an older answer even when a later one settled first', async () => {
    const { h, a, b, first, second } = twoScrapes();
    h.settle(b);
    expect([await state(first), await state(second)]).toEqual(['waiting', 'waiting']);
    h.settle(a);
    expect([await state(first), await state(second)]).toEqual(['settled', 'settled']);
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
