/** A message within this long of the one before it counts toward a busy run. */
export const BUSY_GAP_MS = 1;

/** Messages in a row, each within BUSY_GAP_MS of the one before, that make a subscription busy. */
export const BUSY_RUN = 3;

/**
 * Whether a native subscription's next fetch should be a batch. One receive() per message
 * costs about three times what a batched message costs in pulsar-client (a promise settled
 * through a libuv handle of its own, docs/benchmarks-rationale.md), but a batch waits up to
 * its timeout for company, which a lone call must not. So: single receives while messages
 * come one at a time; batches once BUSY_RUN of them came in a row, each within BUSY_GAP_MS
 * of the one before; single receives again once a batch brings back fewer than two.
 */
export class ReceivePace {
  private last = -Infinity;
  private run = 0;
  private batching = false;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** After a fetch that brought `count` messages: should the next fetch be a batch? */
  next(count: number): boolean {
    if (this.batching) {
      this.batching = count >= 2;
      this.run = 0;
      this.last = -Infinity;
      return this.batching;
    }
    const t = this.now();
    this.run = t - this.last < BUSY_GAP_MS ? this.run + 1 : 1;
    this.last = t;
    this.batching = this.run >= BUSY_RUN;
    return this.batching;
  }
}
