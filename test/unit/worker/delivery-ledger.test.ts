import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from '../../../src/worker/delivery-ledger.js';
import { Outcome } from '../../../src/worker/outcome.js';

describe('DeliveryLedger', () => {
  it('knows a delivery while it is handled, then as answered', () => {
    const ledger = new DeliveryLedger(2);
    const outcome = Promise.resolve(Outcome.Answered);
    expect(ledger.get('a')).toBeUndefined();
    ledger.begin('a', outcome);
    expect(ledger.get('a')).toBe(outcome);
    ledger.settle('a', true);
    expect(ledger.get('a')).toBe(true);
  });

  it('forgets a delivery that settled unanswered (nacked), so that its redelivery runs', () => {
    const ledger = new DeliveryLedger(2);
    ledger.begin('a', Promise.resolve(Outcome.Nacked));
    ledger.settle('a', false);
    expect([ledger.get('a'), ledger.size]).toEqual([undefined, 0]);
  });

  it('keeps the last `capacity` answered keys and forgets the oldest first, never one still handled', () => {
    const ledger = new DeliveryLedger(2);
    for (const key of ['a', 'b', 'c']) {
      ledger.begin(key, Promise.resolve(Outcome.Answered));
      ledger.settle(key, true);
    }
    const running = Promise.resolve(Outcome.Answered);
    ledger.begin('d', running);
    expect([ledger.get('a'), ledger.get('b'), ledger.get('c'), ledger.get('d'), ledger.size]).toEqual([undefined, true, true, running, 3]);
  });

  it('remembers no answer with capacity 0, but still knows what it is handling', () => {
    const ledger = new DeliveryLedger(0);
    const running = Promise.resolve(Outcome.Answered);
    ledger.begin('a', running);
    expect(ledger.get('a')).toBe(running);
    ledger.settle('a', true);
    expect(ledger.get('a')).toBeUndefined();
  });
});
