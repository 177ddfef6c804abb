import { describe, expect, it } from 'vitest';
import { Backoff } from '../../../src/async/backoff.js';

describe('Backoff', () => {
  it('doubles its ceiling up to the maximum and spreads each delay over the upper half', () => {
    const low = new Backoff({ initialDelayMs: 100, maxDelayMs: 1000 }, () => 0);
    const high = new Backoff({ initialDelayMs: 100, maxDelayMs: 1000 }, () => 1);
    expect(Array.from({ length: 6 }, () => low.next())).toEqual([50, 100, 200, 400, 500, 500]);
    expect(Array.from({ length: 6 }, () => high.next())).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('starts over after reset()', () => {
    const b = new Backoff({ initialDelayMs: 10, maxDelayMs: 1000 }, () => 1);
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(10);
  });

  it('stays finite after very many attempts', () => {
    const b = new Backoff({ initialDelayMs: 100, maxDelayMs: 5000 }, () => 1);
    for (let i = 0; i < 2000; i++) b.next();
    expect(b.next()).toBe(5000);
  });
});
