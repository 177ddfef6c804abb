import { describe, expect, it } from 'vitest';
import { medianInterval } from '../../../bench/report/median-interval.js';

describe('medianInterval', () => {
  it('takes the k-th smallest and largest of the rounds, k as large as 90% confidence allows', () => {
    // Ten rounds: k = 2 covers 1 - 2 * 11/1024; k = 3 only 1 - 2 * 56/1024 (0.89).
    const i = medianInterval([0.93, 0.81, 1.05, 0.9, 0.88, 0.95, 0.86, 0.91, 0.99, 0.84]);
    expect(i).toEqual({ low: 0.84, high: 0.99, confidence: 1 - 22 / 1024 });
    // Five rounds: only the smallest and the largest, 1 - 2/32.
    expect(medianInterval([3, 1, 2, 5, 4])).toEqual({ low: 1, high: 5, confidence: 30 / 32 });
  });

  it('narrows as the confidence asked for falls', () => {
    const rounds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(medianInterval(rounds, 0.85)).toEqual({ low: 3, high: 8, confidence: 1 - 112 / 1024 });
  });

  it('says nothing from fewer than five rounds at 90%', () => {
    expect(medianInterval([1, 2, 3, 4])).toBeUndefined();
    expect(medianInterval([])).toBeUndefined();
  });
});
