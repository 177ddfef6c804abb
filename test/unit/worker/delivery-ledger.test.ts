import { describe, expect, it } from 'vitest';
import { DeliveryLedger, Handling } from '../../../src/worker/delivery-ledger.js';
import { Outcome } from '../../../src/worker/outcome.js';

/** Answered deliveries by request id alone (an empty delivery key), as the handler settles them. */
function answeredBy(capacity: number) {
  const ledger = new DeliveryLedger(capacity);
  return {
    add(id: string) {
      ledger.settle(start(ledger, id, '', Promise.resolve(Outcome.Answered)), true);
    },
    has(id: string) {
      return ledger.claim(id, '') === true;
    },
  };
}

/** Claim a first delivery and begin it with `outcome`, as the handler does. */
function start(ledger: DeliveryLedger, id: string, key: string, outcome: Promise<Outcome>): Handling {
  const claim = ledger.claim(id, key);
  if (!(claim instanceof Handling)) throw new Error(`${id} ${key} was not a first delivery`);
  ledger.begin(claim, outcome);
  return claim;
}

describe('DeliveryLedger', () => {
  it('knows a delivery while it is handled, then as answered', () => {
    const ledger = new DeliveryLedger(2);
    const outcome = Promise.resolve(Outcome.Answered);
    const claim = start(ledger, 'a', 'k', outcome);
    expect(ledger.claim('a', 'k')).toBe(outcome);
    ledger.settle(claim, true);
    expect([ledger.claim('a', 'k'), ledger.size]).toEqual([true, 1]);
  });

  it('tells deliveries apart by request id and delivery key together', () => {
    const ledger = new DeliveryLedger(4);
    ledger.settle(start(ledger, 'a', 'k', Promise.resolve(Outcome.Answered)), true);
    expect([ledger.claim('a', 'k'), ledger.claim('b', 'k'), ledger.claim('a', 'j'), ledger.claim('ak', '')].map((c) => c instanceof Handling)).toEqual([
      false,
      true,
      true,
      true,
    ]);
  });

  it('forgets a delivery that settled unanswered (nacked), so that its redelivery runs', () => {
    const ledger = new DeliveryLedger(2);
    ledger.settle(start(ledger, 'a', 'k', Promise.resolve(Outcome.Nacked)), false);
    expect(ledger.size).toBe(0);
    expect(ledger.claim('a', 'k')).toBeInstanceOf(Handling);
  });

  it('keeps the last `capacity` answered keys and forgets the oldest first, never one still handled', () => {
    const ledger = new DeliveryLedger(2);
    for (const id of ['a', 'b', 'c']) ledger.settle(start(ledger, id, 'k', Promise.resolve(Outcome.Answered)), true);
    const running = Promise.resolve(Outcome.Answered);
    start(ledger, 'd', 'k', running);
    expect([ledger.claim('b', 'k'), ledger.claim('c', 'k'), ledger.claim('d', 'k'), ledger.size]).toEqual([true, true, running, 3]);
    // 'a' was forgotten: asking claims it anew.
    expect(ledger.claim('a', 'k')).toBeInstanceOf(Handling);
    expect(ledger.size).toBe(4);
  });

  it('remembers no answer with capacity 0, but still knows what it is handling', () => {
    const ledger = new DeliveryLedger(0);
    const running = Promise.resolve(Outcome.Answered);
    const claim = start(ledger, 'a', 'k', running);
    expect(ledger.claim('a', 'k')).toBe(running);
    ledger.settle(claim, true);
    expect(ledger.size).toBe(0);
    expect(ledger.claim('a', 'k')).toBeInstanceOf(Handling);
  });

  it('keeps apart deliveries handled at once whose fingerprints share the high half', () => {
    // Two ids whose fingerprints under a fixed seed share the high half (birthday search over
    // 2^32: found within a few hundred thousand ids), handled at the same time.
    const seed = Buffer.from('0123456789abcdef', 'hex');
    const prints = new DeliveryLedger(0, seed);
    const byHi = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair && i < 2_000_000; i++) {
      const id = `req-${i}`;
      const [hi] = prints.fingerprint(id, 'k');
      const other = byHi.get(hi);
      if (other !== undefined) pair = [other, id];
      else byHi.set(hi, id);
    }
    expect(pair).toBeDefined();
    const [x, y] = pair!;
    const ledger = new DeliveryLedger(4, seed);
    const xRuns = Promise.resolve(Outcome.Answered);
    const yRuns = Promise.resolve(Outcome.Nacked);
    const xClaim = start(ledger, x, 'k', xRuns);
    const yClaim = start(ledger, y, 'k', yRuns);
    expect([ledger.claim(x, 'k'), ledger.claim(y, 'k'), ledger.size]).toEqual([xRuns, yRuns, 2]);
    // The first claimed is behind the second in its chain: settling it leaves the second there.
    ledger.settle(xClaim, true);
    expect([ledger.claim(x, 'k'), ledger.claim(y, 'k'), ledger.size]).toEqual([true, yRuns, 2]);
    ledger.settle(yClaim, false);
    ledger.settle(yClaim, false);
    expect(ledger.size).toBe(1);
    expect(ledger.claim(y, 'k')).toBeInstanceOf(Handling);
  });

  it('tells apart keys that differ in one unit, in order, in a last lone unit, or in high bits only', () => {
    const keys = answeredBy(10);
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
    const ledger = new DeliveryLedger(10);
    const print = (id: string, key: string) => ledger.fingerprint(id, key).join(':');
    const prints = [print('ab', 'c'), print('a', 'bc'), print('abc', ''), print('', 'abc'), print('ab\n', 'c'), print('ab', '\nc')];
    expect(new Set(prints).size).toBe(prints.length);
    // The same pair gives the same fingerprint.
    expect(print('ab', 'c')).toBe(prints[0]);
  });

  it('spreads a million near-identical keys over 64 bits without a collision', () => {
    // Keys as a native worker makes them (request id, publish time), differing in a few bits:
    // a hash that lets such differences cancel collides here long before 2^32.
    const ledger = new DeliveryLedger(1);
    const seen = new Set<string>();
    for (let i = 0; i < 1_000_000; i++) seen.add(ledger.fingerprint(`req-${i % 1000}`, 1795857242974 + Math.floor(i / 1000)).join(':'));
    expect(seen.size).toBe(1_000_000);
  });

  it('takes a number key by its value, over all 53 bits, and never as a string', () => {
    const ledger = new DeliveryLedger(10);
    const print = (key: string | number) => ledger.fingerprint('req-1', key).join(':');
    // Times a whole 2^32 ms apart differ only in the high word.
    const prints = [print(1795857242974), print(1795857242974 + 2 ** 32), print(2 ** 53 - 1), print(0), print('1795857242974'), print('')];
    expect(new Set(prints).size).toBe(prints.length);
    expect(print(1795857242974)).toBe(prints[0]);
  });
});
