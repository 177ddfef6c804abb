import { oneCallId, type ScenarioResult } from '../bench-runner.js';
import { singleId } from '../scenario-id.js';
import type { LoadResult } from '../load-generator.js';
import { medianInterval, type MedianInterval } from './median-interval.js';

/** One of the targets, judged on a run's figures. */
export interface TargetCheck {
  readonly id: string;
  readonly goal: string;
  /** The measured figure, formatted. */
  readonly measured: string;
  /** undefined: the run lacks the scenarios to judge it. */
  readonly met: boolean | undefined;
}

/** One request topic kind's one-call pair: what an agent waiting on each answer sees. */
export interface OneCallFigures {
  readonly kind: 'persistent' | 'non-persistent';
  readonly floor: LoadResult['latency'];
  readonly toolwire: LoadResult['latency'];
  /** toolwire minus floor, ms. */
  readonly p50AddedMs: number;
  readonly p99AddedMs: number;
  readonly p999AddedMs: number;
}

/** toolwire against a reference in the same rounds, round by round, and the medians over rounds. */
export interface BaselineFigures {
  readonly rounds: number;
  /** toolwire / reference throughput. */
  readonly throughput: number;
  /** Where the median throughput ratio lies (90%); undefined below five rounds. */
  readonly throughputInterval: MedianInterval | undefined;
  /** toolwire p99 minus the reference's p99, ms. */
  readonly p99DiffMs: number;
  readonly perRound: readonly { readonly throughput: number; readonly p99DiffMs: number }[];
  /** The same over the quiet rounds only (see QUIET_STEAL_PCT); undefined when none was. */
  readonly quiet?: { readonly rounds: number; readonly throughput: number; readonly p99DiffMs: number } | undefined;
}

/**
 * A round is quiet when the hypervisor took no more than this share of the machine's CPU
 * during either of its two scenarios. On a shared VM a round can lose a third of its CPU to
 * the host, and then it measures the host, not the change.
 */
export const QUIET_STEAL_PCT = 5;

export interface Ratios {
  /** The one-call pairs measured, the run's request topic kind first. */
  readonly oneCall: readonly OneCallFigures[];
  /** Floor/toolwire rounds the next two figures are the medians of. */
  readonly rounds: number;
  readonly perRound: readonly { readonly throughputVsFloor: number; readonly p99AddedMs: number }[];
  /** toolwire against the floor over the quiet rounds only; undefined when none was. */
  readonly quietVsFloor: BaselineFigures['quiet'];
  /** toolwire / floor throughput. */
  readonly throughputVsFloor: number | undefined;
  /** Where the median of the rounds' toolwire / floor throughput lies (90%); undefined below five rounds. */
  readonly throughputVsFloorInterval: MedianInterval | undefined;
  /** toolwire p99 minus floor p99, ms. */
  readonly p99AddedMs: number | undefined;
  readonly p999AddedMs: number | undefined;
  /** toolwire against the floor on the WebSocket API in the same rounds (target ws-floor); undefined without it. */
  readonly vsWsFloor: BaselineFigures | undefined;
  /** toolwire against another build of itself in the same rounds (--baseline); undefined without one. */
  readonly vsBaseline: BaselineFigures | undefined;
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

interface Pair {
  readonly floor: LoadResult;
  readonly tw: LoadResult;
  /** Neither scenario lost more than QUIET_STEAL_PCT of the machine to the hypervisor (unknown: not quiet). */
  readonly quiet: boolean;
}

/** The `ref`/toolwire pairs of every round (round 1 is `*-single`, round n `*-single-rn`). */
function pairs(results: readonly ScenarioResult[], ref: 'floor' | 'baseline' | 'ws-floor'): Pair[] {
  const out: Pair[] = [];
  const calm = (r: ScenarioResult): boolean => r.machine !== undefined && r.machine.stealPct <= QUIET_STEAL_PCT;
  for (let round = 1; ; round++) {
    const f = results.find((r) => r.scenario.id === singleId(ref, round));
    const t = results.find((r) => r.scenario.id === singleId('toolwire', round));
    if (!f && !t) return out;
    if (f?.load && t?.load && f.load.answered > 0 && t.load.answered > 0) out.push({ floor: f.load, tw: t.load, quiet: calm(f) && calm(t) });
  }
}

function quietFigures(all: readonly Pair[]): BaselineFigures['quiet'] {
  const quiet = all.filter((p) => p.quiet);
  if (quiet.length === 0) return undefined;
  return {
    rounds: quiet.length,
    throughput: median(quiet.map((p) => p.tw.throughputPerSec / p.floor.throughputPerSec))!,
    p99DiffMs: median(quiet.map((p) => p.tw.latency.p99Ms - p.floor.latency.p99Ms))!,
  };
}

function baselineFigures(results: readonly ScenarioResult[], ref: 'baseline' | 'ws-floor'): BaselineFigures | undefined {
  const all = pairs(results, ref);
  const perRound = all.map((r) => ({
    throughput: r.tw.throughputPerSec / r.floor.throughputPerSec,
    p99DiffMs: r.tw.latency.p99Ms - r.floor.latency.p99Ms,
  }));
  if (perRound.length === 0) return undefined;
  return {
    rounds: perRound.length,
    throughput: median(perRound.map((r) => r.throughput))!,
    throughputInterval: medianInterval(perRound.map((r) => r.throughput)),
    p99DiffMs: median(perRound.map((r) => r.p99DiffMs))!,
    perRound,
    quiet: quietFigures(all),
  };
}

export function computeRatios(results: readonly ScenarioResult[]): Ratios {
  const tw = get(results, 'toolwire-single')?.load;
  const rounds = pairs(results, 'floor');
  const py = get(results, 'python-single')?.load;
  const streamResult = get(results, 'toolwire-stream');
  const stream = streamResult?.load;
  const singleCpu = get(results, 'toolwire-single')?.resources?.cpuUsPerRequest;
  const streamCpu = streamResult?.resources?.cpuUsPerRequest;
  const long = get(results, 'toolwire-long')?.resources;
  const oneCall: OneCallFigures[] = [];
  for (const kind of ['persistent', 'non-persistent'] as const) {
    const f = get(results, oneCallId('floor', kind))?.load?.latency;
    const t = get(results, oneCallId('toolwire', kind))?.load?.latency;
    if (f && t) oneCall.push({ kind, floor: f, toolwire: t, p50AddedMs: t.p50Ms - f.p50Ms, p99AddedMs: t.p99Ms - f.p99Ms, p999AddedMs: t.p999Ms - f.p999Ms });
  }
  const vsFloor = rounds.map((r) => r.tw.throughputPerSec / r.floor.throughputPerSec);
  return {
    oneCall,
    rounds: rounds.length,
    throughputVsFloor: median(vsFloor),
    throughputVsFloorInterval: medianInterval(vsFloor),
    p99AddedMs: median(rounds.map((r) => r.tw.latency.p99Ms - r.floor.latency.p99Ms)),
    p999AddedMs: median(rounds.map((r) => r.tw.latency.p999Ms - r.floor.latency.p999Ms)),
    perRound: rounds.map((r, i) => ({ throughputVsFloor: vsFloor[i]!, p99AddedMs: r.tw.latency.p99Ms - r.floor.latency.p99Ms })),
    quietVsFloor: quietFigures(rounds),
    vsWsFloor: baselineFigures(results, 'ws-floor'),
    vsBaseline: baselineFigures(results, 'baseline'),
    throughputVsPeer: tw && py ? tw.throughputPerSec / py.throughputPerSec : undefined,
    p99VsPeer: tw && py ? tw.latency.p99Ms / py.latency.p99Ms : undefined,
    longRunRssGrowth: long?.rssGrowth,
    streamCpuVsSingle: singleCpu !== undefined && streamCpu !== undefined && singleCpu > 0 ? streamCpu / singleCpu : undefined,
    streamCostVsSingle: tw && stream ? tw.throughputPerSec / stream.throughputPerSec : undefined,
    streamP50VsSingle: tw && stream ? stream.latency.p50Ms / tw.latency.p50Ms : undefined,
  };
}

const fmt = (v: number | undefined, digits: number, unit = '') => (v === undefined ? 'not measured' : `${v.toFixed(digits)}${unit}`);

/** Milliseconds with their sign: an added or saved latency. */
export const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)} ms`;

/** The one-call targets: the worker's share of a lone call, and a whole call on the fastest path. */
function oneCallChecks(r: Ratios): TargetCheck[] {
  const added = (pick: (x: OneCallFigures) => number, limit: number) => ({
    measured: r.oneCall.length === 0 ? 'not measured' : r.oneCall.map((x) => `${x.kind} ${signed(pick(x))}`).join(', '),
    met: r.oneCall.length === 0 ? undefined : r.oneCall.every((x) => pick(x) <= limit),
  });
  const fastest = [...r.oneCall].sort((a, b) => a.toolwire.p50Ms - b.toolwire.p50Ms)[0];
  return [
    { id: 'one-call-p50', goal: 'one call in flight: toolwire p50 within 0.1 ms of the floor', ...added((x) => x.p50AddedMs, 0.1) },
    { id: 'one-call-p99', goal: 'one call in flight: toolwire p99 within 0.5 ms of the floor', ...added((x) => x.p99AddedMs, 0.5) },
    {
      id: 'one-call-under-1ms',
      goal: 'one call in flight: a whole call under 1 ms at p50 on the fastest path',
      measured: fastest ? `${fastest.toolwire.p50Ms.toFixed(2)} ms (${fastest.kind})` : 'not measured',
      met: fastest ? fastest.toolwire.p50Ms < 1 : undefined,
    },
  ];
}

/** The targets: five at the run's concurrency (64 by default) with 1 KiB arguments, three at one call in flight. */
export function checkTargets(r: Ratios, longRequests: number | undefined): TargetCheck[] {
  const judge = (v: number | undefined, ok: (x: number) => boolean) => (v === undefined ? undefined : ok(v));
  return [
    {
      id: 'throughput-vs-floor',
      goal: 'toolwire throughput >= 0.9x the floor',
      measured: fmt(r.throughputVsFloor, 3, 'x'),
      met: judge(r.throughputVsFloor, (x) => x >= 0.9),
    },
    { id: 'p99-added', goal: 'toolwire-added p99 <= 2 ms over the floor', measured: fmt(r.p99AddedMs, 2, ' ms'), met: judge(r.p99AddedMs, (x) => x <= 2) },
    {
      id: 'throughput-vs-peer',
      goal: ">= 5x the Python peer's throughput",
      measured: fmt(r.throughputVsPeer, 2, 'x'),
      met: judge(r.throughputVsPeer, (x) => x >= 5),
    },
    {
      id: 'rss-flat',
      goal: `RSS flat within 10% across ${longRequests ? longRequests.toLocaleString('en-US') : '200,000'} requests`,
      measured: r.longRunRssGrowth === undefined ? 'not measured' : `${(r.longRunRssGrowth * 100).toFixed(1)}%`,
      met: judge(r.longRunRssGrowth, (x) => Math.abs(x) <= 0.1),
    },
    {
      id: 'stream-cost',
      goal: 'streaming 100 chunks costs <= 2x the single answer per request (worker CPU per request)',
      measured:
        r.streamCpuVsSingle === undefined ? 'not measured' : `${r.streamCpuVsSingle.toFixed(2)}x CPU (throughput ratio ${fmt(r.streamCostVsSingle, 2, 'x')})`,
      met: judge(r.streamCpuVsSingle, (x) => x <= 2),
    },
    ...oneCallChecks(r),
    {
      id: 'native-vs-ws-floor',
      goal: 'on the native client: toolwire throughput >= 1.3x the WebSocket floor at equal or lower p99 (target ws-floor)',
      measured: r.vsWsFloor === undefined ? 'not measured' : `${r.vsWsFloor.throughput.toFixed(3)}x, p99 ${signed(r.vsWsFloor.p99DiffMs)}`,
      met: r.vsWsFloor === undefined ? undefined : r.vsWsFloor.throughput >= 1.3 && r.vsWsFloor.p99DiffMs <= 0,
    },
  ];
}
