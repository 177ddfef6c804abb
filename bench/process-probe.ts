/**
 * Loaded into a benchmarked Node process with `--import` (the bench sets NODE_OPTIONS), so
 * the process itself — `toolwire run` or the floor — needs no code for it. When its parent
 * says `start` over the IPC channel, it reports RSS, heap, CPU time, event-loop delay and the
 * collector's pauses once per interval, and on Linux the main thread's CPU apart from the
 * process's. Everything is unref'd: the probe never keeps a finished process alive.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { GcPauses } from './gc-pauses.js';
import { PROBE_SAMPLE, PROBE_START, procStatCpuMs, type ProbeSample } from './resource-sample.js';

/** The main thread's own CPU (its task id is the process id), where Linux tells it: what JavaScript and the event loop spend. */
function mainThreadCpuUs(): number | undefined {
  try {
    return procStatCpuMs(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')) * 1000;
  } catch {
    return undefined;
  }
}

if (typeof process.send === 'function') {
  process.channel?.unref();
  let timer: NodeJS.Timeout | undefined;
  process.on('message', (m: unknown) => {
    const msg = m as { type?: unknown; intervalMs?: unknown } | null;
    if (msg?.type !== PROBE_START || timer !== undefined) return;
    const intervalMs = typeof msg.intervalMs === 'number' && msg.intervalMs >= 100 ? msg.intervalMs : 1000;
    const eld = monitorEventLoopDelay({ resolution: 10 });
    eld.enable();
    const gc = new GcPauses();
    timer = setInterval(() => {
      const mem = process.memoryUsage();
      const cpu = process.cpuUsage();
      const main = mainThreadCpuUs();
      const sample: ProbeSample = {
        type: PROBE_SAMPLE,
        atMs: Date.now(),
        rssBytes: mem.rss,
        heapUsedBytes: mem.heapUsed,
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        ...(main === undefined ? {} : { mainThreadCpuUs: main }),
        // The histogram is in nanoseconds; its floor is the 10 ms resolution's own sampling.
        eldP50Ms: eld.percentile(50) / 1e6,
        eldP99Ms: eld.percentile(99) / 1e6,
        eldMaxMs: eld.max / 1e6,
        gc: gc.take(),
      };
      eld.reset();
      if (process.connected) process.send?.(sample);
    }, intervalMs);
    timer.unref();
  });
}
