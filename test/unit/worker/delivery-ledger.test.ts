import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from '../../../src/worker/delivery-ledger.js';
import { Outcome } from '../../../src/worker/outcome.js';

describe('DeliveryLedger', () => {
  it('knows a delivery while it is handled, then as answered', () => {
    const ledger = new DeliveryLedger(2);
    const outcome = Promise.resolve(Outcome.Answered);
    expect(ledger.claim('a')).toBeUndefined();
    ledger.begin('a', outcome);
    expect(ledger.claim('a')).toBe(outcome);
    ledger.settle('a', true);
    expect([ledger.claim('a'), ledger.size]).toEqual([true, 1]);
  });

  it('forgets a delivery that settled unanswered (nacked), so that its redelivery runs', () => {
    const ledger = new DeliveryLedger(2);
    ledger.claim('a');
    ledger.begin('a', Promise.resolve(Outcome.Nacked));
    ledger.settle('a', false);
    expect(ledger.size).toBe(0);
    expect(ledger.claim('a')).toBeUndefined();
  });

  it('keeps the last `capacity` answered keys and forgets the oldest first, never one still handled', () => {
    const ledger = new DeliveryLedger(2);
    for (const key of ['a', 'b', 'c']) {
      ledger.claim(key);
      ledger.begin(key, Promise.resolve(Outcome.Answered));
      ledger.settle(key, true);
    }
    const running = Promise.resolve(Outcome.Answered);
    ledger.claim('d');
    ledger.begin('d', running);
    expect([ledger.claim('b'), ledger.claim('c'), ledger.claim('d'), ledger.size]).toEqual([true, true, running, 3]);
    // 'a' was forgotten: asking claims it anew.
    expect([ledger.claim('a'), ledger.size]).toEqual([undefined, 4]);
  });

  it('remembers no answer with capacity 0, but still knows what it is handling', () => {
    const ledger = new DeliveryLedger(0);
    const running = Promise.resolve(Outcome.Answered);
    ledger.claim('a');
    ledger.begin('a', running);
    expect(ledger.claim('a')).toBe(running);
    ledger.settle('a', true);
    expect([ledger.size, ledger.claim('a')]).toEqual([0, undefined]);
  });
});
