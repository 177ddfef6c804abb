import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GcPauses, type GcPauseWindow } from './gc-pauses.js';
import { PROBE_SAMPLE, PROBE_START, procStatCpuMs, type ProbeSample, type ResourceSample } from './resource-sample.js';

interface RawSample {
  readonly atMs: number;
  readonly rssBytes: number;
  readonly heapUsedBytes?: number;
  readonly cpuMs: number | undefined;
  readonly mainThreadCpuMs?: number | undefined;
  readonly eldP99Ms: number | undefined;
  readonly eldMaxMs: number | undefined;
  readonly gc?: GcPauseWindow | undefined;
}

/** A target's resource time series, however it is obtained. */
export interface ResourceSampler {
  stop(): void;
  /** The series with times relative to `zeroAtMs` (the start of the measured phase). */
  series(zeroAtMs: number): ResourceSample[];
}

abstract class BaseSampler implements ResourceSampler {
  protected readonly raw: RawSample[] = [];
  abstract stop(): void;
  series(zeroAtMs: number): ResourceSample[] {
    return this.raw.map((r) => ({
      tMs: r.atMs - zeroAtMs,
      rssBytes: r.rssBytes,
      heapUsedBytes: r.heapUsedBytes,
      cpuMs: r.cpuMs,
      mainThreadCpuMs: r.mainThreadCpuMs,
      eldP99Ms: r.eldP99Ms,
      eldMaxMs: r.eldMaxMs,
      gc: r.gc,
    }));
  }
}

/** A Node child started with process-probe.ts preloaded and an IPC channel. */
export class ProbeSampler extends BaseSampler {
  private readonly onMessage = (m: unknown) => {
    const s = m as Partial<ProbeSample> | null;
    if (s?.type !== PROBE_SAMPLE) return;
    this.raw.push({
      atMs: s.atMs ?? Date.now(),
      rssBytes: s.rssBytes ?? 0,
      heapUsedBytes: s.heapUsedBytes,
      cpuMs: ((s.cpuUserUs ?? 0) + (s.cpuSystemUs ?? 0)) / 1000,
      mainThreadCpuMs: s.mainThreadCpuUs === undefined ? undefined : s.mainThreadCpuUs / 1000,
      eldP99Ms: s.eldP99Ms,
      eldMaxMs: s.eldMaxMs,
      gc: s.gc,
    });
  };

  constructor(
    private readonly child: ChildProcess,
    intervalMs: number,
  ) {
    super();
    child.on('message', this.onMessage);
    if (child.connected) child.send({ type: PROBE_START, intervalMs });
  }

  stop(): void {
    this.child.off('message', this.onMessage);
  }
}

/** The process and every process below it, as Linux lists their children (each thread its own: a JVM forks from a worker thread). */
export async function processTree(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const lists = await Promise.all(tasks.map((tid) => readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '')));
  const children = lists.flatMap((list) => list.split(' ')).filter((c) => c !== '');
  const below = await Promise.all(children.map((c) => processTree(Number(c))));
  return [pid, ...below.flat()];
}

/**
 * Any process on Linux, read from /proc (the Python peer): RSS and CPU, no event loop. With
 * `tree`, the process and its descendants summed: a launcher that runs its work in a child
 * (`pulsar-admin functions localrun` starts a second JVM) is counted whole.
 */
export class ProcSampler extends BaseSampler {
  private readonly timer: NodeJS.Timeout;
  constructor(
    private readonly pid: number,
    intervalMs: number,
    private readonly tree = false,
  ) {
    super();
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  private async sample(): Promise<void> {
    try {
      const pids = this.tree ? await processTree(this.pid) : [this.pid];
      const read = await Promise.all(pids.map((p) => Promise.all([readFile(`/proc/${p}/status`, 'utf8'), readFile(`/proc/${p}/stat`, 'utf8')])));
      const rssKb = read.reduce((sum, [status]) => sum + Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0), 0);
      const cpuMs = read.reduce((sum, [, stat]) => sum + procStatCpuMs(stat), 0);
      this.raw.push({ atMs: Date.now(), rssBytes: rssKb * 1024, cpuMs, eldP99Ms: undefined, eldMaxMs: undefined });
    } catch {
      // The process is gone (or this is not Linux): the series simply ends.
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** This process (memory transport: target and load generator share it). */
export class SelfSampler extends BaseSampler {
  private readonly timer: NodeJS.Timeout;
  private readonly eld = monitorEventLoopDelay({ resolution: 10 });
  private readonly gc = new GcPauses();

  constructor(intervalMs: number) {
    super();
    this.eld.enable();
    this.timer = setInterval(() => {
      const cpu = process.cpuUsage();
      const mem = process.memoryUsage();
      this.raw.push({
        atMs: Date.now(),
        rssBytes: mem.rss,
        heapUsedBytes: mem.heapUsed,
        cpuMs: (cpu.user + cpu.system) / 1000,
        eldP99Ms: this.eld.percentile(99) / 1e6,
        eldMaxMs: this.eld.max / 1e6,
        gc: this.gc.take(),
      });
      this.eld.reset();
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.eld.disable();
    this.gc.stop();
  }
}
