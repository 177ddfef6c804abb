import type { ScenarioResult } from '../bench-runner.js';
import type { LoadResult } from '../load-generator.js';

/** One of the targets, judged on a run's figures. */
export interface TargetCheck {
  readonly id: string;
  readonly goal: string;
  /** The measured figure, formatted. */
  readonly measured: string;
  /** undefined: the run lacks the scenarios to judge it. */
  readonly met: boolean | undefined;
}

export interface Ratios {
  /** Floor/toolwire rounds the next two figures are the medians of. */
  readonly rounds: number;
  readonly perRound: readonly { readonly throughputVsFloor: number; readonly p99AddedMs: number }[];
  /** toolwire / floor throughput. */
  readonly throughputVsFloor: number | undefined;
  /** toolwire p99 minus floor p99, ms. */
  readonly p99AddedMs: number | undefined;
  readonly p999AddedMs: number | undefined;
  /** toolwire / Python peer throughput. */
  readonly throughputVsPeer: number | undefined;
  /** toolwire / Python peer p99 (below 1: toolwire is faster). */
  readonly p99VsPeer: number | undefined;
  /** RSS growth over the long run, (end - start) / start. */
  readonly longRunRssGrowth: number | undefined;
  /** Worker CPU per request, streamed answer over single answer: what the stream target is judged on. */
  readonly streamCpuVsSingle: number | undefined;
  /** Single throughput / stream throughput (broker and agents carry the extra messages too). */
  readonly streamCostVsSingle: number | undefined;
  readonly streamP50VsSingle: number | undefined;
}

function get(results: readonly ScenarioResult[], id: string): ScenarioResult | undefined {
  return results.find((r) => r.scenario.id === id && r.load !== undefined && r.load.answered > 0);
}

function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1]! + v[mid]!) / 2;
}

/** The floor/toolwire pairs of every round (round 1 is `*-single`, round n `*-single-rn`). */
function pairs(results: readonly ScenarioResult[]): { floor: LoadResult; tw: LoadResult }[] {
  const out: { floor: LoadResult; tw: LoadResult }[] = [];
  for (let round = 1; ; round++) {
    const suffix = round === 1 ? '' : `-r${round}`;
    const f = results.find((r) => r.scenario.id === `floor-single${suffix}`);
    const t = results.find((r) => r.scenario.id === `toolwire-single${suffix}`);
    if (!f && !t) return out;
    if (f?.load && t?.load && f.load.answered > 0 && t.load.answered > 0) out.push({ floor: f.load, tw: t.load });
  }
}

export function computeRatios(results: readonly ScenarioResult[]): Ratios {
  const tw = get(results, 'toolwire-single')?.load;
  const rounds = pairs(results);
  const py = get(results, 'python-single')?.load;
  const streamResult = get(results, 'toolwire-stream');
  const stream = streamResult?.load;
  const singleCpu = get(results, 'toolwire-single')?.resources?.cpuUsPerRequest;
  const streamCpu = streamResult?.resources?.cpuUsPerRequest;
  const long = get(results, 'toolwire-long')?.resources;
  return {
    rounds: rounds.length,
    throughputVsFloor: median(rounds.map((r) => r.tw.throughputPerSec / r.floor.throughputPerSec)),
    p99AddedMs: median(rounds.map((r) => r.tw.latency.p99Ms - r.floor.latency.p99Ms)),
    p999AddedMs: median(rounds.map((r) => r.tw.latency.p999Ms - r.floor.latency.p999Ms)),
    perRound: rounds.map((r) => ({ throughputVsFloor: r.tw.throughputPerSec / r.floor.throughputPerSec, p99AddedMs: r.tw.latency.p99Ms - r.floor.latency.p99Ms })),
    throughputVsPeer: tw && py ? tw.throughputPerSec / py.throughputPerSec : undefined,
    p99VsPeer: tw && py ? tw.latency.p99Ms / py.latency.p99Ms : undefined,
    longRunRssGrowth: long?.rssGrowth,
    streamCpuVsSingle: singleCpu !== undefined && streamCpu !== undefined && singleCpu > 0 ? streamCpu / singleCpu : undefined,
    streamCostVsSingle: tw && stream ? tw.throughputPerSec / stream.throughputPerSec : undefined,
    streamP50VsSingle: tw && stream ? stream.latency.p50Ms / tw.latency.p50Ms : undefined,
  };
}

const fmt = (v: number | undefined, digits: number, unit = '') => (v === undefined ? 'not measured' : `${v.toFixed(digits)}${unit}`);

/** The five targets, at concurrency 64 and 1 KiB arguments. */
export function checkTargets(r: Ratios, longRequests: number | undefined): TargetCheck[] {
  const judge = (v: number | undefined, ok: (x: number) => boolean) => (v === undefined ? undefined : ok(v));
  return [
    { id: 'throughput-vs-floor', goal: 'toolwire throughput >= 0.9x the floor', measured: fmt(r.throughputVsFloor, 3, 'x'), met: judge(r.throughputVsFloor, (x) => x >= 0.9) },
    { id: 'p99-added', goal: 'toolwire-added p99 <= 2 ms over the floor', measured: fmt(r.p99AddedMs, 2, ' ms'), met: judge(r.p99AddedMs, (x) => x <= 2) },
    { id: 'throughput-vs-peer', goal: ">= 5x the Python peer's throughput", measured: fmt(r.throughputVsPeer, 2, 'x'), met: judge(r.throughputVsPeer, (x) => x >= 5) },
    {
      id: 'rss-flat',
      goal: `RSS flat within 10% across ${longRequests ? longRequests.toLocaleString('en-US') : '200,000'} requests`,
      measured: r.longRunRssGrowth === undefined ? 'not measured' : `${(r.longRunRssGrowth * 100).toFixed(1)}%`,
      met: judge(r.longRunRssGrowth, (x) => Math.abs(x) <= 0.1),
    },
    {
      id: 'stream-cost',
      goal: 'streaming 100 chunks costs <= 2x the single answer per request (worker CPU per request)',
      measured: r.streamCpuVsSingle === undefined ? 'not measured' : `${r.streamCpuVsSingle.toFixed(2)}x CPU (throughput ratio ${fmt(r.streamCostVsSingle, 2, 'x')})`,
      met: judge(r.streamCpuVsSingle, (x) => x <= 2),
    },
  ];
}
