/** One sample of a LabelledCounts: its three label values, then its count. */
export type LabelledCount = readonly [first: string, second: string, third: string, count: number];

/**
 * Counts by three label values (a service, a plugin, an event...), a Map per level: each value
 * is kept as it came, never joined into one key that has to be split back at scrape time.
 */
export class LabelledCounts {
  private readonly byFirst = new Map<string, Map<string, Map<string, number>>>();

  add(first: string, second: string, third: string, n = 1): void {
    let bySecond = this.byFirst.get(first);
    if (bySecond === undefined) this.byFirst.set(first, (bySecond = new Map<string, Map<string, number>>()));
    let byThird = bySecond.get(second);
    if (byThird === undefined) bySecond.set(second, (byThird = new Map<string, number>()));
    byThird.set(third, (byThird.get(third) ?? 0) + n);
  }

  /** Drop every count whose first two values `keep` refuses. */
  retain(keep: (first: string, second: string) => boolean): void {
    for (const [first, bySecond] of this.byFirst) {
      for (const second of bySecond.keys()) if (!keep(first, second)) bySecond.delete(second);
      if (bySecond.size === 0) this.byFirst.delete(first);
    }
  }

  *[Symbol.iterator](): IterableIterator<LabelledCount> {
    for (const [first, bySecond] of this.byFirst) for (const [second, byThird] of bySecond) for (const [third, n] of byThird) yield [first, second, third, n];
  }
}
