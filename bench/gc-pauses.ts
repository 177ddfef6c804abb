import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** A process's collector pauses over one sampling interval. */
export interface GcPauseWindow {
  /** Full (mark-compact) collections that ended in the interval. */
  readonly majorCount: number;
  /** The longest of them, ms; 0 when there was none. */
  readonly majorMaxMs: number;
  /** Every pause of the main thread for the collector (scavenges included), ms. */
  readonly pauseMs: number;
}

/**
 * The collector's pauses, as V8 reports them to perf_hooks, summed per interval. A native
 * client's per-call objects die only in a full collection, and their finalizers run in its
 * pause: the event-loop delay shows such a stall, this says it was the collector's.
 */
export class GcPauses {
  private majorCount = 0;
  private majorMaxMs = 0;
  private pauseMs = 0;
  private readonly observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.add(e);
  });

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  private add(e: PerformanceEntry): void {
    this.pauseMs += e.duration;
    // A gc entry's detail says which collector ran (Node's own typing of entries leaves it out).
    if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) return;
    this.majorCount++;
    this.majorMaxMs = Math.max(this.majorMaxMs, e.duration);
  }

  /** What the interval since the last call held; starts the next. */
  take(): GcPauseWindow {
    const w = { majorCount: this.majorCount, majorMaxMs: this.majorMaxMs, pauseMs: this.pauseMs };
    this.majorCount = 0;
    this.majorMaxMs = 0;
    this.pauseMs = 0;
    return w;
  }

  stop(): void {
    this.observer.disconnect();
  }
}
