import { AnsweredKeys } from './answered-keys.js';
import type { Outcome } from './outcome.js';

/**
 * The deliveries of a redelivering topic this worker is handling or has answered, by request
 * id and delivery key, so that a copy of one runs nothing: it settles as the first did, or is
 * acked at once. A key being handled is kept until it settles; the last `capacity` answered
 * keys are kept as fingerprints (answered-keys.ts), the oldest forgotten first.
 */
export class DeliveryLedger {
  /** A promise of its outcome while a delivery is handled. Few at a time, and short-lived. */
  private readonly handling = new Map<string, Promise<Outcome>>();
  private readonly answered: AnsweredKeys;

  constructor(capacity: number) {
    this.answered = new AnsweredKeys(Math.max(0, capacity));
  }

  /** `true` if answered, the first delivery's outcome while it is handled, else undefined. */
  get(key: string): Promise<Outcome> | true | undefined {
    return this.handling.get(key) ?? (this.answered.has(key) ? true : undefined);
  }

  /** A first delivery is being handled; `outcome` settles with it. */
  begin(key: string, outcome: Promise<Outcome>): void {
    this.handling.set(key, outcome);
  }

  /** The delivery of `key` settled: remembered as answered, or forgotten (a redelivery of it must run). */
  settle(key: string, answered: boolean): void {
    this.handling.delete(key);
    if (answered) this.answered.add(key);
  }

  /** Keys known: answered and being handled. */
  get size(): number {
    return this.handling.size + this.answered.size;
  }
}
