import { Fifo } from './fifo.js';

/**
 * A bound on how much runs at once, shared by its callers. A free slot is taken at once,
 * with no promise and no turn of the microtask queue; a caller that finds none waits, and
 * waiters start in the order they came as slots are released. The worker's global bound
 * sits on every request's path, where p-limit cost a promise chain of its own (about 1.5 µs
 * a request, docs/benchmarks.md) to say "go" to a request that almost never waits.
 */
export class Slots {
  readonly limit: number;
  private taken = 0;
  private readonly waiting = new Fifo<() => void>();

  constructor(limit: number) {
    if (!(limit === Number.POSITIVE_INFINITY || (Number.isInteger(limit) && limit > 0))) {
      throw new RangeError(`a bound must be a positive integer, not ${limit}`);
    }
    this.limit = limit;
  }

  /** Slots held now. */
  get active(): number {
    return this.taken;
  }

  /** Callers waiting for a slot. */
  get pending(): number {
    return this.waiting.size;
  }

  /** Take a free slot and say true, or say false and take nothing. */
  tryAcquire(): boolean {
    if (this.taken >= this.limit) return false;
    this.taken++;
    return true;
  }

  /**
   * Call `start` holding a slot: now (before this returns) when one is free, else when a
   * release hands one over (a freed slot goes straight to the longest waiter, so nobody who
   * comes later gets ahead). Whoever `start` begins must release() once.
   */
  acquire(start: () => void): void {
    if (this.taken < this.limit) {
      this.taken++;
      start();
    } else this.waiting.push(start);
  }

  /** Give a slot back; the longest waiter, if any, gets it. */
  release(): void {
    if (this.taken === 0) throw new Error('released a slot that was not taken');
    const next = this.waiting.shift();
    if (next) next();
    else this.taken--;
  }
}
