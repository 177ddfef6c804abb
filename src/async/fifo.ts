/**
 * A first-in first-out array that takes from the front in O(1): a head index instead of
 * Array.shift(), with the taken part dropped now and then so a long-lived queue does not keep
 * a growing array.
 */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Put an item back at the front (a redelivery goes before what waits). */
  unshift(item: T): void {
    if (this.head > 0) this.items[--this.head] = item;
    else this.items.unshift(item);
  }

  /** The front item, left in place. */
  peek(): T | undefined {
    return this.size > 0 ? this.items[this.head] : undefined;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head++]!;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Empty it, dropping what was in it. */
  clear(): void {
    this.items = [];
    this.head = 0;
  }

  /** Empty it; returns what was in it, front first. */
  drain(): T[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }
}
