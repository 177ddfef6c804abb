export interface BackoffOptions {
  /** First delay ceiling; default 100 ms. */
  readonly initialDelayMs?: number;
  /** Largest delay ceiling; default 10 000 ms. */
  readonly maxDelayMs?: number;
}

/**
 * Jittered exponential backoff ("equal jitter"): attempt n waits a random time in
 * [ceiling/2, ceiling], ceiling = min(max, initial * 2^n). The random spread keeps many
 * clients that lost the same broker from reconnecting in lockstep.
 */
export class Backoff {
  private attempt = 0;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
  ) {
    this.initialDelayMs = Math.max(1, options.initialDelayMs ?? 100);
    this.maxDelayMs = Math.max(this.initialDelayMs, options.maxDelayMs ?? 10_000);
  }

  /** The delay before the next attempt; each call grows the ceiling. */
  next(): number {
    // Cap the exponent so 2^n cannot overflow into Infinity on a long outage.
    const ceiling = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /** How many delays next() has handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
