import type { Outcome } from './outcome.js';

/**
 * The deliveries of a redelivering topic this worker is handling or has answered, by request
 * id and delivery key, so that a copy of one runs nothing: it settles as the first did, or is
 * acked at once. One Map serves both, so a request costs four lookups (its own, its start, its
 * end, and the oldest answered key let go): on a loaded machine each lookup of a string key is
 * a few cache misses, and the worker's persistent path paid seven (docs/benchmarks-rationale.md).
 * The last `capacity` answered keys are kept, the oldest forgotten first; a key being handled is
 * kept until it settles.
 */
export class DeliveryLedger {
  /** A promise of its outcome while a delivery is handled; `true` once it was answered. */
  private readonly entries = new Map<string, Promise<Outcome> | true>();
  private readonly ring: (string | undefined)[];
  private next = 0;

  constructor(capacity: number) {
    this.ring = new Array<string | undefined>(Math.max(0, capacity));
  }

  /** `true` if answered, the first delivery's outcome while it is handled, else undefined. */
  get(key: string): Promise<Outcome> | true | undefined {
    return this.entries.get(key);
  }

  /** A first delivery is being handled; `outcome` settles with it. */
  begin(key: string, outcome: Promise<Outcome>): void {
    this.entries.set(key, outcome);
  }

  /** The delivery of `key` settled: remembered as answered, or forgotten (a redelivery of it must run). */
  settle(key: string, answered: boolean): void {
    if (!answered || this.ring.length === 0) {
      this.entries.delete(key);
      return;
    }
    this.entries.set(key, true);
    const old = this.ring[this.next];
    if (old !== undefined && old !== key) this.entries.delete(old);
    this.ring[this.next] = key;
    this.next = (this.next + 1) % this.ring.length;
  }

  /** Keys known: answered and being handled. */
  get size(): number {
    return this.entries.size;
  }
}
