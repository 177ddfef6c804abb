import { AnsweredKeys } from './answered-keys.js';
import type { Outcome } from './outcome.js';

/** A delivery being handled: its outcome once begun, and the fingerprint it is remembered by once answered. */
class Handling {
  outcome: Promise<Outcome> | undefined = undefined;
  constructor(
    readonly hi: number,
    readonly lo: number,
  ) {}
}

/**
 * The deliveries of a redelivering topic this worker is handling or has answered, by request
 * id and delivery key, so that a copy of one runs nothing: it settles as the first did, or is
 * acked at once. A key being handled is kept until it settles; the last `capacity` answered
 * keys are kept as fingerprints (answered-keys.ts), the oldest forgotten first. A key is
 * hashed once, when claimed.
 */
export class DeliveryLedger {
  /** Few at a time, and short-lived. */
  private readonly handling = new Map<string, Handling>();
  private readonly answered: AnsweredKeys;

  constructor(capacity: number) {
    this.answered = new AnsweredKeys(Math.max(0, capacity));
  }

  /**
   * `true` if answered, the first delivery's outcome while it is handled. Otherwise
   * undefined, and the caller handles this delivery: begin() and settle() follow.
   */
  claim(key: string): Promise<Outcome> | true | undefined {
    const now = this.handling.get(key);
    if (now !== undefined) return now.outcome;
    const answered = this.answered;
    answered.hash(key);
    if (answered.has(answered.hi, answered.lo)) return true;
    this.handling.set(key, new Handling(answered.hi, answered.lo));
    return undefined;
  }

  /** The claimed delivery of `key` is being handled; `outcome` settles with it. */
  begin(key: string, outcome: Promise<Outcome>): void {
    const now = this.handling.get(key);
    if (now !== undefined) now.outcome = outcome;
  }

  /** The delivery of `key` settled: remembered as answered, or forgotten (a redelivery of it must run). */
  settle(key: string, answered: boolean): void {
    const now = this.handling.get(key);
    if (now === undefined) return;
    this.handling.delete(key);
    if (answered) this.answered.add(now.hi, now.lo);
  }

  /** Keys known: answered and being handled. */
  get size(): number {
    return this.handling.size + this.answered.size;
  }
}
