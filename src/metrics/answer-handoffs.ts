/**
 * Final answers handed to the broker whose requests have not settled yet (publish confirmed,
 * then acked, or nacked when the publish failed). An agent can read an answer before its
 * worker hears the broker confirm it, so a count taken when the request settles can lag the
 * answers; counted when handed over, it would be wrong each time a publish then fails (a
 * counter cannot be taken back). So outcomes are counted when they are final, and a scrape
 * first waits for the answers handed over before it began: it never shows fewer outcomes than
 * the answers an agent could have read, and never one that did not happen.
 *
 * Handoffs are counted by epoch, and each scrape starts a new one: the hot path adds and
 * takes one from a number in an array (a Set of tickets cost about 70 ns more a request,
 * docs/benchmarks-rationale.md); only a scrape makes a promise.
 */
export class AnswerHandoffs {
  /** The epoch new handoffs join. */
  private epoch = 0;
  /** The oldest epoch still counted: `open[0]` is its count of unsettled handoffs. */
  private base = 0;
  private readonly open: number[] = [0];
  private waiters: { readonly upTo: number; readonly resolve: () => void }[] = [];

  /** The final answer of a request goes to the broker now; returns its ticket (its epoch). */
  hand(): number {
    this.open[this.epoch - this.base]!++;
    return this.epoch;
  }

  /** The request of `ticket` has settled and its outcome is counted. */
  settle(ticket: number): void {
    const i = ticket - this.base;
    // Past epochs only end; the current one still takes handoffs.
    if (--this.open[i]! === 0 && i === 0 && ticket < this.epoch) this.drop();
  }

  /**
   * Resolves once every answer handed over before this call has settled, or after `timeoutMs`
   * (a publish the transport never confirms must not hold a scrape).
   */
  settled(timeoutMs: number): Promise<void> {
    if (this.pending() === 0) return Promise.resolve();
    const upTo = this.epoch++;
    this.open.push(0);
    return new Promise<void>((resolve) => {
      const waiter = {
        upTo,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        resolve();
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Handoffs not settled yet, of every epoch. */
  private pending(): number {
    let n = 0;
    for (const count of this.open) n += count;
    return n;
  }

  /** Past epochs at the front whose handoffs have all settled are done: wake the scrapes waiting for them. */
  private drop(): void {
    while (this.base < this.epoch && this.open[0] === 0) {
      this.open.shift();
      this.base++;
    }
    const ready = this.waiters.filter((waiter) => waiter.upTo < this.base);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => waiter.upTo >= this.base);
    for (const w of ready) w.resolve();
  }
}
