import type { GcPauseWindow } from './gc-pauses.js';

/** IPC message types between the bench and process-probe.ts. */
export const PROBE_START = 'toolwire-bench-probe-start';
export const PROBE_SAMPLE = 'toolwire-bench-probe-sample';

/** What process-probe.ts sends once per interval. */
export interface ProbeSample {
  readonly type: typeof PROBE_SAMPLE;
  readonly atMs: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** Cumulative CPU time of the process. */
  readonly cpuUserUs: number;
  readonly cpuSystemUs: number;
  /** Cumulative CPU time of the main thread alone, where JavaScript runs (Linux; else absent). */
  readonly mainThreadCpuUs?: number;
  /** Event-loop delay over the last interval. */
  readonly eldP50Ms: number;
  readonly eldP99Ms: number;
  readonly eldMaxMs: number;
  /** The collector's pauses over the last interval. */
  readonly gc?: GcPauseWindow;
}

/** One point of a target's resource time series, whatever its runtime. */
export interface ResourceSample {
  /** Since the measured phase started (negative during warm-up). */
  readonly tMs: number;
  readonly rssBytes: number;
  /** V8 heap in use (Node targets only): tells a leak from RSS the allocator keeps. */
  readonly heapUsedBytes?: number | undefined;
  /** Cumulative CPU time (user + system), when known. */
  readonly cpuMs: number | undefined;
  /** The same for the main thread alone (Node targets on Linux). */
  readonly mainThreadCpuMs?: number | undefined;
  /** Event-loop delay p99 over the interval (Node targets only). */
  readonly eldP99Ms: number | undefined;
  readonly eldMaxMs: number | undefined;
  /** The collector's pauses over the interval (Node targets only). */
  readonly gc?: GcPauseWindow | undefined;
}

export interface ResourceSummary {
  readonly samples: number;
  /** RSS at the start of the measured phase and at its end (median of the first / last three samples, so one GC does not decide). */
  readonly rssStartBytes: number;
  readonly rssEndBytes: number;
  readonly rssMaxBytes: number;
  /** RSS at the very first sample, warm-up included (start-up growth shows against this). */
  readonly rssFirstBytes: number;
  /** (end - start) / start. */
  readonly rssGrowth: number;
  /** The same for the V8 heap in use, when known. */
  readonly heapStartBytes: number | undefined;
  readonly heapEndBytes: number | undefined;
  /** CPU time spent during the measured phase, per answered request. */
  readonly cpuUsPerRequest: number | undefined;
  /** The main thread's part of it: the rest is the runtime's helper threads and native libraries' own. */
  readonly mainThreadCpuUsPerRequest: number | undefined;
  readonly eldP99MaxMs: number | undefined;
  readonly eldMaxMs: number | undefined;
  /** The collector's pauses over the measured phase, when known: in all, per answered request; the full collections, and the longest. */
  readonly gc?: { readonly pauseUsPerRequest: number; readonly majorCount: number; readonly majorMaxMs: number } | undefined;
}

export function summarizeResources(samples: readonly ResourceSample[], answered: number): ResourceSummary | undefined {
  const measured = samples.filter((s) => s.tMs >= 0);
  if (measured.length === 0) return undefined;
  const first = measured[0]!;
  const last = measured[measured.length - 1]!;
  const rssStart = median(measured.slice(0, 3).map((s) => s.rssBytes));
  const rssEnd = median(measured.slice(-3).map((s) => s.rssBytes));
  const heap = measured.map((s) => s.heapUsedBytes).filter((v): v is number => v !== undefined);
  // CPU from the last warm-up sample (or the first measured one) to the last.
  const before = [...samples].reverse().find((s) => s.tMs < 0) ?? first;
  const perRequest = (from: number | undefined, to: number | undefined): number | undefined =>
    from !== undefined && to !== undefined && answered > 0 ? ((to - from) * 1000) / answered : undefined;
  const eld = measured.map((s) => s.eldP99Ms).filter((v): v is number => v !== undefined);
  const eldMax = measured.map((s) => s.eldMaxMs).filter((v): v is number => v !== undefined);
  const gc = measured.map((s) => s.gc).filter((v): v is GcPauseWindow => v !== undefined);
  return {
    samples: measured.length,
    rssStartBytes: rssStart,
    rssEndBytes: rssEnd,
    rssMaxBytes: Math.max(...measured.map((s) => s.rssBytes)),
    rssFirstBytes: samples[0]?.rssBytes ?? first.rssBytes,
    rssGrowth: rssStart > 0 ? (rssEnd - rssStart) / rssStart : 0,
    heapStartBytes: heap.length > 0 ? median(heap.slice(0, 3)) : undefined,
    heapEndBytes: heap.length > 0 ? median(heap.slice(-3)) : undefined,
    cpuUsPerRequest: perRequest(before.cpuMs, last.cpuMs),
    mainThreadCpuUsPerRequest: perRequest(before.mainThreadCpuMs, last.mainThreadCpuMs),
    eldP99MaxMs: eld.length > 0 ? Math.max(...eld) : undefined,
    eldMaxMs: eldMax.length > 0 ? Math.max(...eldMax) : undefined,
    gc:
      gc.length > 0 && answered > 0
        ? {
            pauseUsPerRequest: (gc.reduce((a, w) => a + w.pauseMs, 0) * 1000) / answered,
            majorCount: gc.reduce((a, w) => a + w.majorCount, 0),
            majorMaxMs: Math.max(...gc.map((w) => w.majorMaxMs)),
          }
        : undefined,
  };
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  return v.length === 0 ? 0 : v[Math.floor((v.length - 1) / 2)]!;
}

/** USER_HZ: clock ticks per second in /proc's stat files; 100 on every Linux we run on. */
const PROC_TICKS_PER_SEC = 100;

/**
 * User plus system CPU of a `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat` line, in ms.
 * Fields are counted after the parenthesised command name (which may hold spaces): utime is
 * field 14 of the line, stime 15.
 */
export function procStatCpuMs(stat: string): number {
  return (procStatCpuTicks(stat) * 1000) / PROC_TICKS_PER_SEC;
}

/** The same, in the clock ticks the line counts in (those of /proc/stat too). */
export function procStatCpuTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
}
