import { Fifo } from './fifo.js';

/**
 * An unbounded FIFO that one consumer takes from with `for await`. Producers never block;
 * the bound lives upstream (a broker's receiver queue or the in-memory dispatcher).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items = new Fifo<T>();
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private ended = false;

  get size(): number {
    return this.items.size;
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
    const rest = this.items.drain();
    this.wakeDone();
    return rest;
  }

  /**
   * End intake but keep what is queued: next() hands it out, then reports done. For a
   * non-persistent topic, whose received messages exist nowhere else.
   */
  finish(): void {
    this.ended = true;
    if (this.size === 0) this.wakeDone();
  }

  private wakeDone(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<T>> {
    if (this.size > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
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
