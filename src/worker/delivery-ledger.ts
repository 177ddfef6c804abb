import { AnsweredKeys } from './answered-keys.js';

/** Buckets of the deliveries being handled: a power of two, above a service's usual concurrency. */
const BUCKETS = 1024;

/**
 * A delivery being handled, by the fingerprint of its request id and delivery key. The
 * handler that claimed it gives it its outcome (begin) and hands it back when it settles.
 */
export class Handling<T = unknown> {
  /** Set by begin(), in the same turn as the claim: no other claim can come between. */
  outcome: Promise<T> | undefined = undefined;
  /** The next delivery being handled in the same bucket. */
  next: Handling<T> | undefined = undefined;
  constructor(
    readonly hi: number,
    readonly lo: number,
  ) {}
}

/**
 * The deliveries of a redelivering topic this worker is handling or has answered, by request
 * id and delivery key, so that a copy of one runs nothing: it settles as the first did, or is
 * acked at once. A delivery being handled is kept until it settles; the last `capacity`
 * answered are kept as fingerprints (answered-keys.ts), the oldest forgotten first. Both are
 * found by the fingerprint, taken once when claimed: no key string is made or hashed again
 * (docs/benchmarks-rationale.md). `T` is what a delivery's handling resolves to.
 */
export class DeliveryLedger<T = unknown> {
  /**
   * Few at a time (the service's concurrency), and short-lived: chained in buckets by the low
   * bits of the fingerprint's high half. An array, not a Map: a Map hashed its key again and
   * rehashed as entries came and went, four times a request (docs/benchmarks-rationale.md).
   */
  private readonly handling: (Handling<T> | undefined)[] = new Array<Handling<T> | undefined>(BUCKETS).fill(undefined);
  private handled = 0;
  private readonly answered: AnsweredKeys;

  /** `seed`: see AnsweredKeys. */
  constructor(capacity: number, seed?: Buffer) {
    this.answered = new AnsweredKeys(Math.max(0, capacity), seed);
  }

  /**
   * `true` if answered, the first delivery's outcome while it is handled. Otherwise a new
   * Handling: the caller handles this delivery, and begin() and settle() follow with it.
   */
  claim(id: string, deliveryKey: string | number): Handling<T> | Promise<T> | true {
    const answered = this.answered;
    answered.hash(id, deliveryKey);
    const { hi, lo } = answered;
    const bucket = hi & (BUCKETS - 1);
    const head = this.handling[bucket];
    // The outcome is there: begin() follows a claim in the same turn.
    for (let h = head; h !== undefined; h = h.next) if (h.lo === lo && h.hi === hi) return h.outcome ?? true;
    if (answered.has(hi, lo)) return true;
    const h = new Handling<T>(hi, lo);
    h.next = head;
    this.handling[bucket] = h;
    this.handled++;
    return h;
  }

  /** The claimed delivery is being handled; `outcome` settles with it. */
  begin(h: Handling<T>, outcome: Promise<T>): void {
    h.outcome = outcome;
  }

  /** The delivery settled: remembered as answered, or forgotten (a redelivery of it must run). */
  settle(h: Handling<T>, answered: boolean): void {
    const bucket = h.hi & (BUCKETS - 1);
    const head = this.handling[bucket];
    if (head === h) this.handling[bucket] = h.next;
    else {
      let before = head;
      while (before !== undefined && before.next !== h) before = before.next;
      // Settled twice: the first settle took it out already.
      if (before === undefined) return;
      before.next = h.next;
    }
    this.handled--;
    if (answered) this.answered.add(h.hi, h.lo);
  }

  /** Deliveries known: answered and being handled. */
  get size(): number {
    return this.handled + this.answered.size;
  }
}
