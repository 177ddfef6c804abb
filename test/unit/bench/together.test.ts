import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_DEFAULTS, type BenchOptions } from '../../../bench/bench-options.js';
import { planScenarios, scenarioBatches, warmBrokerFirst, type ScenarioResult } from '../../../bench/bench-runner.js';
import { ProgressReporter } from '../../../bench/progress.js';
import { runBench } from '../../../bench/run-bench.js';
import { startTogether } from '../../../bench/start-together.js';

const options: BenchOptions = {
  ...BENCH_DEFAULTS,
  transport: 'memory',
  broker: undefined,
  targets: ['floor', 'toolwire'],
  rounds: 2,
  requests: 3_000,
  warmupMs: 0,
  streamChunks: 0,
  oneCallMs: 0,
  longRequests: 0,
  cpuProf: false,
  python: undefined,
  baselineDir: undefined,
  outDir: 'unused',
};

describe('startTogether', () => {
  it('lets every run go once all have arrived, each counted once however often it calls', async () => {
    const [a, b, c] = startTogether(3);
    let gone = false;
    const all = Promise.all([a!(), a!(), b!()]).then(() => (gone = true));
    // Two of three arrived (a twice): nobody goes yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(gone).toBe(false);
    await c!();
    await all;
    expect(gone).toBe(true);
  });
});

describe('scenarioBatches', () => {
  it('runs one at a time unless together', () => {
    const s = planScenarios({ ...options, targets: ['floor', 'toolwire', 'python'], oneCallMs: 1000 });
    expect(scenarioBatches(s, false).map((b) => b.length)).toEqual(s.map(() => 1));
  });

  it("puts each round's single answers in one batch, the Python peer and everything else alone, each batch on one warm-up", () => {
    const s = warmBrokerFirst(
      planScenarios({ ...options, transport: 'pulsar-ws', targets: ['floor', 'toolwire', 'python'], rounds: 3, oneCallMs: 1000, streamChunks: 10 }),
      { transport: 'pulsar-ws', warmupMs: 0 },
    );
    const batches = scenarioBatches(s, true);
    expect(batches.map((b) => b.map((x) => x.id))).toEqual([
      ['floor-single', 'toolwire-single'],
      ['python-single'],
      ['toolwire-single-r2', 'floor-single-r2'],
      ['toolwire-single-r3', 'floor-single-r3'],
      ['floor-c1-persistent'],
      ['toolwire-c1-persistent'],
      ['toolwire-c1-non-persistent'],
      ['floor-c1-non-persistent'],
      ['toolwire-stream'],
    ]);
    // The broker's warm-up was the first scenario's: its partner waits as long.
    expect(batches[0]!.map((x) => x.warmupMs)).toEqual([s[0]!.warmupMs, s[0]!.warmupMs]);
    expect(s[0]!.warmupMs).toBeGreaterThan(0);
  });
});

describe('a run with --together', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  /** Each round's measured phases as [start, end] in ms, by target. */
  async function windows(together: boolean): Promise<{ rounds: Array<Record<string, [number, number]>>; md: string }> {
    const outDir = await mkdtemp(join(tmpdir(), 'toolwire-together-'));
    dirs.push(outDir);
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    const { report, files } = await runBench({ ...options, together, outDir }, 'test', {
      log: pino({ level: 'silent' }),
      progress: new ProgressReporter(sink, false),
      signal: new AbortController().signal,
    });
    const byRound: Array<Record<string, [number, number]>> = [];
    for (const r of report.scenarios as ScenarioResult[]) {
      expect(r.error).toBeUndefined();
      expect(r.load?.answered).toBe(options.requests);
      const round = Number(/-r(\d+)$/.exec(r.scenario.id)?.[1] ?? 1) - 1;
      (byRound[round] ??= {})[r.scenario.target] = [r.load!.startedAtMs, r.load!.startedAtMs + r.load!.elapsedMs];
    }
    return { rounds: byRound, md: await readFile(files.markdown, 'utf8') };
  }

  const overlap = (a: [number, number], b: [number, number]) => a[0] < b[1] && b[0] < a[1];

  it("measures each round's targets over the same time, and says so; one after the other without it", async () => {
    const together = await windows(true);
    expect(together.rounds).toHaveLength(2);
    for (const r of together.rounds) expect(overlap(r['floor']!, r['toolwire']!)).toBe(true);
    expect(together.md).toContain('(--together)');

    const apart = await windows(false);
    for (const r of apart.rounds) expect(overlap(r['floor']!, r['toolwire']!)).toBe(false);
    expect(apart.md).not.toContain('(--together)');
  }, 120_000);
});
