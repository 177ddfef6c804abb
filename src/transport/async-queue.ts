/**
 * An unbounded FIFO that one consumer takes from with `for await`. Producers never block;
 * the bound lives upstream (a broker's receiver queue or the in-memory dispatcher).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private head = 0;
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private ended = false;

  get size(): number {
    return this.items.length - this.head;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  push(item: T): boolean {
    if (this.ended) return false;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
    }
    return true;
  }

  /** End iteration; returns what was queued and not taken. */
  end(): T[] {
    this.ended = true;
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    const w = this.waiter;
    this.waiter = undefined;
    w?.({ value: undefined, done: true });
    return rest;
  }

  /**
   * End intake but keep what is queued: next() hands it out, then reports done. For a
   * non-persistent topic, whose received messages exist nowhere else.
   */
  finish(): void {
    this.ended = true;
    if (this.size > 0) return;
    const w = this.waiter;
    this.waiter = undefined;
    w?.({ value: undefined, done: true });
  }

  private take(): T | undefined {
    const item = this.items[this.head];
    this.head++;
    // Compact now and then so a long-lived queue does not keep a growing array.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.size > 0) return Promise.resolve({ value: this.take() as T, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    if (this.waiter) return Promise.reject(new Error('AsyncQueue allows one reader at a time'));
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.next(),
      return: async () => {
        this.end();
        return { value: undefined, done: true };
      },
    };
  }
}
