import type { Registry } from 'prom-client';

/** One label set's buckets (not cumulative: each observation counts once), sum and count. */
export class HistogramSeries {
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  /** Cumulative counts per bound, +Inf last. */
  cumulative(): number[] {
    const out: number[] = [];
    let acc = 0;
    for (const c of this.counts) out.push((acc += c));
    return out;
  }
}

interface ExportValue {
  readonly value: number;
  readonly labels: Record<string, string | number>;
  readonly metricName: string;
}

/**
 * A histogram registered in a prom-client registry, which formats it as it formats its own.
 * prom-client's Histogram validates and hashes its labels on every observe, too dear for three
 * observations a request (docs/benchmarks-rationale.md); here a series is looked up once per
 * label set and an observation is a bucket search and three additions.
 */
export class LatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series of one label set, made on first use. */
  child(labels: Readonly<Record<string, string>>): HistogramSeries {
    const key = JSON.stringify(labels);
    let s = this.series.get(key);
    if (!s) {
      s = new HistogramSeries(labels, this.bounds);
      this.series.set(key, s);
    }
    return s;
  }

  /** Drop a series (its labels left the catalog); an observation into it afterwards is not exposed. */
  remove(series: HistogramSeries): void {
    const key = JSON.stringify(series.labels);
    if (this.series.get(key) === series) this.series.delete(key);
  }

  /** What prom-client's registry reads to write the exposition text. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportValue[] }> {
    const values: ExportValue[] = [];
    for (const s of this.series.values()) {
      const cumulative = s.cumulative();
      this.bounds.forEach((bound, i) => values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: bound }, value: cumulative[i]! }));
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...s.labels }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...s.labels }, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
