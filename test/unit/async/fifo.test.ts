import { describe, expect, it } from 'vitest';
import { Fifo } from '../../../src/async/fifo.js';

describe('Fifo', () => {
  it('gives items back in the order they were pushed, across its compactions', () => {
    const q = new Fifo<number>();
    const out: number[] = [];
    // Past the compaction threshold (1,024 taken) several times, with pushes in between.
    for (let i = 0; i < 5000; i++) {
      q.push(i);
      if (i % 3 === 2) out.push(q.shift()!, q.shift()!);
    }
    while (q.size > 0) out.push(q.shift()!);
    expect(out).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(q.shift()).toBeUndefined();
  });

  it('puts an item back at the front, before what waits, whether or not some were taken', () => {
    const q = new Fifo<string>();
    q.unshift('a');
    q.push('b');
    q.push('c');
    expect(q.shift()).toBe('a');
    q.unshift('a again');
    q.unshift('first');
    expect(q.size).toBe(4);
    expect(q.drain()).toEqual(['first', 'a again', 'b', 'c']);
    expect(q.size).toBe(0);
  });

  it('drops everything on clear', () => {
    const q = new Fifo<number>();
    q.push(1);
    q.push(2);
    q.shift();
    q.clear();
    expect(q.size).toBe(0);
    expect(q.peek()).toBeUndefined();
    q.push(3);
    expect(q.shift()).toBe(3);
  });
});
