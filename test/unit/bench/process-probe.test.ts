import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { PROBE_MODULE_URL } from '../../../bench/child-process.js';
import { ProbeSampler } from '../../../bench/resource-sampler.js';
import type { ResourceSample } from '../../../bench/resource-sample.js';

// The compiled probe (npm test builds the bench first), preloaded as the bench preloads it.
let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill();
  child = undefined;
});

/** Polls `sampler` until a sample satisfies `ok`, or fails at the deadline. */
async function sampleWhere(sampler: ProbeSampler, ok: (s: ResourceSample) => boolean, timeoutMs: number): Promise<ResourceSample> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = sampler.series(0).find(ok);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no such sample within ${timeoutMs} ms: ${JSON.stringify(sampler.series(0))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the process probe', () => {
  it.skipIf(process.platform !== 'linux')("reports the main thread's CPU, which holds a busy loop of that thread and stays within the process's", async () => {
    // 400 ms of the process's CPU spent on its main thread (counted in CPU, not wall time: a
    // loaded machine may hold the thread off), then idle until killed.
    const script = 'while (process.cpuUsage().user < 400_000); setInterval(() => undefined, 1000);';
    child = spawn(process.execPath, ['--import', PROBE_MODULE_URL, '-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const sampler = new ProbeSampler(child, 100);
    try {
      const s = await sampleWhere(sampler, (x) => x.mainThreadCpuMs !== undefined, 10_000);
      // Start-up's other threads take some of the 400 ms; the kernel counts in 10 ms ticks, and
      // the process's figure comes from another call.
      expect(s.mainThreadCpuMs!).toBeGreaterThanOrEqual(300);
      expect(s.mainThreadCpuMs!).toBeLessThanOrEqual(s.cpuMs! + 20);
    } finally {
      sampler.stop();
    }
  });

  it("reports the collector's full collections and their pauses", async () => {
    // A full collection every 20 ms, each over a heap kept big enough to take measurable time.
    const script = 'const keep = Array.from({ length: 200_000 }, (_, i) => ({ i })); setInterval(() => { globalThis.gc(); return keep.length; }, 20);';
    child = spawn(process.execPath, ['--expose-gc', '--import', PROBE_MODULE_URL, '-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const sampler = new ProbeSampler(child, 100);
    try {
      const s = await sampleWhere(sampler, (x) => (x.gc?.majorCount ?? 0) >= 2, 10_000);
      expect(s.gc!.majorMaxMs).toBeGreaterThan(0);
      // The pauses in all hold the longest full one.
      expect(s.gc!.pauseMs).toBeGreaterThanOrEqual(s.gc!.majorMaxMs);
    } finally {
      sampler.stop();
    }
  });

  it('counts a scavenge among the pauses but not among the full collections', async () => {
    // Garbage that dies young: scavenges only, nothing promoted for a full collection to find.
    const script = 'setInterval(() => { for (let i = 0; i < 100_000; i++) ({ i }); }, 10);';
    child = spawn(process.execPath, ['--import', PROBE_MODULE_URL, '-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const sampler = new ProbeSampler(child, 100);
    try {
      await sampleWhere(sampler, (x) => (x.gc?.pauseMs ?? 0) > 0, 10_000);
      expect(sampler.series(0).reduce((n, x) => n + (x.gc?.majorCount ?? 0), 0)).toBe(0);
    } finally {
      sampler.stop();
    }
  });
});
