import { describe, expect, it } from 'vitest';
import { AnsweredKeys } from '../../../src/worker/answered-keys.js';

/** The same contract kept the plain way: the last `capacity` keys added, oldest forgotten first. */
class Reference {
  private readonly order: string[] = [];
  private readonly times = new Map<string, number>();
  private oldest = 0;
  constructor(private readonly capacity: number) {}
  add(key: string): void {
    this.order.push(key);
    this.times.set(key, (this.times.get(key) ?? 0) + 1);
    if (this.order.length - this.oldest > this.capacity) {
      const gone = this.order[this.oldest++]!;
      const left = this.times.get(gone)! - 1;
      if (left === 0) this.times.delete(gone);
      else this.times.set(gone, left);
    }
  }
  has(key: string): boolean {
    return this.times.has(key);
  }
  get size(): number {
    return this.times.size;
  }
}

/** The ledger's use: a key's fingerprint taken, then asked for or added. */
function byKey(capacity: number) {
  const keys = new AnsweredKeys(capacity);
  return {
    add(key: string) {
      keys.hash(key, '');
      keys.add(keys.hi, keys.lo);
    },
    has(key: string) {
      keys.hash(key, '');
      return keys.has(keys.hi, keys.lo);
    },
    get size() {
      return keys.size;
    },
  };
}

describe('AnsweredKeys', () => {
  it('keeps the last `capacity` keys and forgets the oldest first', () => {
    const keys = byKey(2);
    for (const key of ['a', 'b', 'c']) keys.add(key);
    expect([keys.has('a'), keys.has('b'), keys.has('c'), keys.has('d'), keys.size]).toEqual([false, true, true, false, 2]);
  });

  it('keeps a key answered again until its newer answer is the oldest', () => {
    const keys = byKey(3);
    for (const key of ['a', 'b', 'a', 'c']) keys.add(key);
    // The ring now holds b, a, c: the first 'a' was let go, its second answer still counts.
    expect([keys.has('a'), keys.has('b'), keys.has('c'), keys.size]).toEqual([true, true, true, 3]);
    keys.add('d');
    keys.add('e');
    expect([keys.has('a'), keys.has('b'), keys.has('c'), keys.has('d'), keys.has('e')]).toEqual([false, false, true, true, true]);
  });

  it('remembers nothing with capacity 0', () => {
    const keys = byKey(0);
    keys.add('a');
    expect([keys.has('a'), keys.size]).toEqual([false, 0]);
  });

  it('agrees with the plain list over a long run of adds and repeats, its table crowded and growing', () => {
    // Capacity 5 in 16 slots: homes clash and probes run past removed keys, which is where an
    // open-addressing table goes wrong. Capacity 3,000 grows its table from 64 slots.
    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (const capacity of [1, 5, 64, 3000]) {
      const keys = byKey(capacity);
      const reference = new Reference(capacity);
      for (let step = 0; step < 20_000; step++) {
        const key = `req-${random(capacity * 3)}\n${random(4)}:0:-1`;
        keys.add(key);
        reference.add(key);
        const probe = `req-${random(capacity * 3)}\n${random(4)}:0:-1`;
        expect(keys.has(probe), `${probe} at step ${step}, capacity ${capacity}`).toBe(reference.has(probe));
      }
      expect(keys.size).toBe(reference.size);
    }
  });

  it('tells apart keys that differ in one unit, in order, in a last lone unit, or in high bits only', () => {
    const keys = byKey(10);
    keys.add('abc\n1:2:-1:-1');
    keys.add('x');
    expect([keys.has('abc\n1:2:-1:-1'), keys.has('abd\n1:2:-1:-1'), keys.has('abc\n2:1:-1:-1'), keys.has('abc\n1:2:-1:-')]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect([keys.has('x'), keys.has('x\0'), keys.has('\u0178'), keys.has('\u8078')]).toEqual([true, false, false, false]);
  });

  it('tells apart where the request id ends and the delivery key begins', () => {
    const keys = new AnsweredKeys(10);
    const print = (id: string, key: string) => (keys.hash(id, key), `${keys.hi}:${keys.lo}`);
    const prints = [print('ab', 'c'), print('a', 'bc'), print('abc', ''), print('', 'abc'), print('ab\n', 'c'), print('ab', '\nc')];
    expect(new Set(prints).size).toBe(prints.length);
    // The same pair gives the same fingerprint.
    expect(print('ab', 'c')).toBe(prints[0]);
  });

  it('spreads a million near-identical keys over 64 bits without a collision', () => {
    // Keys as a native worker makes them (request id, publish time), differing in a few bits:
    // a hash that lets such differences cancel collides here long before 2^32.
    const keys = new AnsweredKeys(1);
    const seen = new Set<string>();
    for (let i = 0; i < 1_000_000; i++) {
      keys.hash(`req-${i % 1000}`, 1795857242974 + Math.floor(i / 1000));
      seen.add(`${keys.hi}:${keys.lo}`);
    }
    expect(seen.size).toBe(1_000_000);
  });

  it('takes a number key by its value, over all 53 bits, and never as a string', () => {
    const keys = new AnsweredKeys(10);
    const print = (key: string | number) => (keys.hash('req-1', key), `${keys.hi}:${keys.lo}`);
    // Times a whole 2^32 ms apart differ only in the high word.
    const prints = [print(1795857242974), print(1795857242974 + 2 ** 32), print(2 ** 53 - 1), print(0), print('1795857242974'), print('')];
    expect(new Set(prints).size).toBe(prints.length);
    expect(print(1795857242974)).toBe(prints[0]);
  });
});
