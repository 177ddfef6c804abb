import { describe, expect, it } from 'vitest';
import { AnsweredKeys } from '../../../src/worker/answered-keys.js';
import { DeliveryLedger } from '../../../src/worker/delivery-ledger.js';

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

/** The ledger's use: a key's fingerprint taken (as the ledger takes it), then asked for or added. */
function byKey(capacity: number) {
  const keys = new AnsweredKeys(capacity);
  const prints = new DeliveryLedger(0);
  return {
    add(key: string) {
      keys.add(...prints.fingerprint(key, ''));
    },
    has(key: string) {
      return keys.has(...prints.fingerprint(key, ''));
    },
    get bytes() {
      return keys.bytes;
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

  it('holds little until keys come, and grows to its capacity as they do', () => {
    const keys = byKey(10_000);
    // A full ring and table of 10,000 keys take 80 KB and 512 KB.
    const atStart = keys.bytes;
    expect(atStart).toBeLessThan(2_048);
    for (let i = 0; i < 20; i++) keys.add(`a-${i}`);
    expect(keys.bytes).toBe(atStart);
    for (let i = 0; i < 1_000; i++) keys.add(`b-${i}`);
    expect(keys.bytes).toBeLessThan(64 * 1_024);
    expect([keys.has('a-0'), keys.has('b-999'), keys.size]).toEqual([true, true, 1_020]);
    for (let i = 0; i < 10_000; i++) keys.add(`c-${i}`);
    expect([keys.has('b-999'), keys.has('c-0'), keys.has('c-9999'), keys.size]).toEqual([false, true, true, 10_000]);
    expect(keys.bytes).toBeGreaterThanOrEqual(10_000 * 8);
  });
});
