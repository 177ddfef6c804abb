/**
 * The last `capacity` keys seen, oldest forgotten first. A Set keeps insertion order, so the
 * oldest is its first value: add and has are O(1) with no timers.
 */
export class RecentIds {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    if (this.capacity <= 0) return;
    this.keys.add(key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value as string);
  }

  get size(): number {
    return this.keys.size;
  }
}
