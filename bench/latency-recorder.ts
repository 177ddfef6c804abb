import { build, type Histogram } from 'hdr-histogram-js';

/** Latency percentiles in milliseconds (recorded in microseconds, 3 significant digits). */
export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

/** One hour in microseconds: anything slower is clamped (and is a failed run anyway). */
const HIGHEST_US = 3_600_000_000;

/**
 * An HdrHistogram of request latencies. Recording is O(1) and allocation-free, so the load
 * generator can record every answer without disturbing what it measures.
 */
export class LatencyRecorder {
  private readonly histogram: Histogram = build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    autoResize: false,
  });

  /** Record one latency given in milliseconds (fractions kept to the microsecond). */
  recordMs(ms: number): void {
    const us = Math.round(ms * 1000);
    this.histogram.recordValue(Math.min(HIGHEST_US, Math.max(1, us)));
  }

  get count(): number {
    return this.histogram.totalCount;
  }

  summary(): LatencySummary {
    const h = this.histogram;
    const at = (p: number) => h.getValueAtPercentile(p) / 1000;
    if (h.totalCount === 0) return { count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0, meanMs: 0 };
    return {
      count: h.totalCount,
      p50Ms: at(50),
      p90Ms: at(90),
      p99Ms: at(99),
      p999Ms: at(99.9),
      maxMs: h.maxValue / 1000,
      meanMs: h.mean / 1000,
    };
  }

  /** Points of the percentile curve (for the chart): [percentile, ms]. */
  curve(percentiles: readonly number[] = [50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100]): [number, number][] {
    return percentiles.map((p) => [p, this.histogram.getValueAtPercentile(p) / 1000]);
  }

  reset(): void {
    this.histogram.reset();
  }

  destroy(): void {
    this.histogram.destroy();
  }
}
