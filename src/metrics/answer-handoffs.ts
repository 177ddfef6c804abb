/**
 * Final answers handed to the broker whose requests have not settled yet (publish confirmed,
 * then acked, or nacked when the publish failed). An agent can read an answer before its
 * worker hears the broker confirm it, so a count taken when the request settles can lag the
 * answers; counted when handed over, it would be wrong each time a publish then fails (a
 * counter cannot be taken back). So outcomes are counted when they are final, and a scrape
 * first waits for the answers handed over before it began: it never shows fewer outcomes than
 * the answers an agent could have read, and never one that did not happen.
 *
 * The hot path pays a number and a set entry per request; only a scrape makes a promise.
 */
export class AnswerHandoffs {
  private last = 0;
  /** Open handoffs; a Set keeps insertion order, so its first entry is the oldest. */
  private readonly open = new Set<number>();
  private waiters: { readonly upTo: number; readonly resolve: () => void }[] = [];

  /** The final answer of a request goes to the broker now; returns its ticket. */
  hand(): number {
    const ticket = ++this.last;
    this.open.add(ticket);
    return ticket;
  }

  /** The request of `ticket` has settled and its outcome is counted. */
  settle(ticket: number): void {
    this.open.delete(ticket);
    if (this.waiters.length > 0) this.wake();
  }

  /**
   * Resolves once every answer handed over before this call has settled, or after `timeoutMs`
   * (a publish the transport never confirms must not hold a scrape).
   */
  settled(timeoutMs: number): Promise<void> {
    const upTo = this.last;
    if (this.oldest() > upTo) return Promise.resolve();
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

  private oldest(): number {
    for (const t of this.open) return t;
    return Infinity;
  }

  private wake(): void {
    const oldest = this.oldest();
    const ready = this.waiters.filter((waiter) => oldest > waiter.upTo);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => oldest <= waiter.upTo);
    for (const w of ready) w.resolve();
  }
}
