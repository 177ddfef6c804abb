import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../../src/worker/recent-ids.js';

describe('RecentIds', () => {
  it('remembers the last `capacity` keys and forgets the oldest first', () => {
    const r = new RecentIds(2);
    r.add('a');
    r.add('b');
    r.add('a'); // already there: does not push b out
    r.add('c');
    expect([r.has('a'), r.has('b'), r.has('c'), r.size]).toEqual([false, true, true, 2]);
  });

  it('remembers nothing with capacity 0', () => {
    const r = new RecentIds(0);
    r.add('a');
    expect(r.has('a')).toBe(false);
  });
});
