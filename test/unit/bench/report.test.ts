import { describe, expect, it } from 'vitest';
import { BENCH_DEFAULTS, type BenchOptions } from '../../../bench/bench-options.js';
import { allScenarios, BROKER_WARMUP_MS, planScenarios, roundOrder, topicsFor, warmBrokerFirst, type ScenarioResult } from '../../../bench/bench-runner.js';
import type { LoadResult } from '../../../bench/load-generator.js';
import { procStatCpuMs, summarizeResources } from '../../../bench/resource-sample.js';
import type { BenchReport } from '../../../bench/report/bench-report.js';
import { markdownReport } from '../../../bench/report/markdown-report.js';
import { svgChart } from '../../../bench/report/svg-chart.js';
import { checkTargets, computeRatios } from '../../../bench/report/target-checks.js';

function load(throughputPerSec: number, p99Ms: number, p50Ms = p99Ms / 2): LoadResult {
  return {
    requests: 1000,
    answered: 1000,
    errors: 0,
    timeouts: 0,
    wrongAnswers: 0,
    strayMessages: 0,
    responseMessages: 1000,
    startedAtMs: 0,
    elapsedMs: 1000,
    throughputPerSec,
    latency: { count: 1000, p50Ms, p90Ms: p99Ms * 0.8, p99Ms, p999Ms: p99Ms * 1.5, maxMs: p99Ms * 2, meanMs: p50Ms },
    curve: [],
    perSecond: [],
    firstErrors: [],
  };
}

function result(id: string, l: LoadResult | undefined, rss: [number, number] = [100, 100]): ScenarioResult {
  const [target, mode] = id.split('-') as [ScenarioResult['scenario']['target'], string];
  // Warm-up, then seven samples: three at the start figure, one between, three at the end figure.
  const mbs = [rss[0], rss[0], rss[0], (rss[0] + rss[1]) / 2, rss[1], rss[1], rss[1]];
  const series = [
    { tMs: -500, rssBytes: rss[0] * 2 ** 20, cpuMs: 0, eldP99Ms: 1, eldMaxMs: 2 },
    ...mbs.map((mb, i) => ({ tMs: i * 1000, rssBytes: mb * 2 ** 20, cpuMs: 10 + i * 100, eldP99Ms: 1, eldMaxMs: 2 })),
  ];
  return {
    scenario: { id, target, stream: mode === 'stream', chunks: mode === 'stream' ? 100 : 0, requests: undefined, durationMs: 1000, purpose: 'test' },
    description: `${target} <process>`,
    topics: { serviceId: 's', requestTopic: 'persistent://tg/flow/r', responseTopic: 'non-persistent://tg/response/r', subscription: 's-request' },
    load: l,
    resources: l ? summarizeResources(series, l.answered) : undefined,
    series,
    error: l ? undefined : 'boom\nmore',
  };
}

/** The Markdown report of `scenarios` on a made-up machine. */
function reportOf(scenarios: readonly ScenarioResult[], ratios: ReturnType<typeof computeRatios>): string {
  return markdownReport(
    {
      runId: 'r',
      startedAt: 'a',
      finishedAt: 'b',
      command: 'npm run bench',
      loadAverageEnd: 0,
      machine: {
        cpus: 2,
        cpuModel: 'c',
        memoryGiB: 1,
        freeMemoryGiB: 1,
        os: 'l',
        node: 'v20',
        pulsar: 'x',
        python: undefined,
        trustgraphBase: undefined,
        loadAverage: 0,
      },
      options: { ...options, broker: 'http://b' },
      scenarios,
      ratios,
      checks: checkTargets(ratios, undefined),
    },
    undefined,
  );
}

/** Five rounds of floor, toolwire and baseline; toolwire's throughput differs round by round. */
const fiveRounds = [500, 950, 900, 1000, 870].flatMap((rps, i) => {
  const suffix = i === 0 ? '' : `-r${i + 1}`;
  return [
    result(`floor-single${suffix}`, load(1000, 10)),
    result(`toolwire-single${suffix}`, load(rps, 11)),
    result(`baseline-single${suffix}`, load(1000, 10)),
  ];
});

describe('target checks', () => {
  it('computes the ratios the targets are judged on', () => {
    const r = computeRatios([
      result('floor-single', load(1000, 10)),
      result('toolwire-single', load(950, 11)),
      result('python-single', load(100, 40)),
      result('toolwire-stream', load(500, 20)),
      result('toolwire-long', load(900, 12), [100, 105]),
    ]);
    expect(r.throughputVsFloor).toBeCloseTo(0.95);
    expect(r.p99AddedMs).toBeCloseTo(1);
    expect(r.throughputVsPeer).toBeCloseTo(9.5);
    expect(r.streamCostVsSingle).toBeCloseTo(1.9);
    // The fixture's series give every scenario the same CPU per request.
    expect(r.streamCpuVsSingle).toBeCloseTo(1);
    expect(r.longRunRssGrowth).toBeCloseTo(0.05);
    // The one-call targets and the native one are n/a: this run has no one-call or ws-floor scenarios.
    expect(checkTargets(r, 200_000).map((c) => c.met)).toEqual([true, true, true, true, true, undefined, undefined, undefined, undefined]);
    expect(r.oneCall).toEqual([]);
  });

  it('says when a target is missed, and n/a when its scenarios did not run', () => {
    const r = computeRatios([result('floor-single', load(1000, 10)), result('toolwire-single', load(800, 15))]);
    const checks = checkTargets(r, undefined);
    expect(checks.find((c) => c.id === 'throughput-vs-floor')?.met).toBe(false);
    expect(checks.find((c) => c.id === 'p99-added')?.met).toBe(false);
    expect(checks.find((c) => c.id === 'throughput-vs-peer')?.met).toBeUndefined();
    expect(checks.find((c) => c.id === 'rss-flat')?.measured).toBe('not measured');
  });

  it('takes the floor ratios as medians over rounds, each round a floor/toolwire pair', () => {
    const r = computeRatios([
      result('floor-single', load(1000, 10)),
      result('toolwire-single', load(500, 30)),
      result('toolwire-single-r2', load(950, 11)),
      result('floor-single-r2', load(1000, 10)),
      result('floor-single-r3', load(1000, 10)),
      result('toolwire-single-r3', load(900, 12)),
    ]);
    expect(r.rounds).toBe(3);
    expect(r.throughputVsFloor).toBeCloseTo(0.9);
    expect(r.p99AddedMs).toBeCloseTo(2);
    expect(r.perRound.map((x) => x.throughputVsFloor)).toEqual([0.5, 0.95, 0.9]);
    // Three rounds say where the median lies with no more than 75% confidence: not given.
    expect(r.throughputVsFloorInterval).toBeUndefined();
  });

  it('says where the median ratio lies from five rounds on, against the floor and a baseline', () => {
    const r = computeRatios(fiveRounds);
    expect(r.throughputVsFloor).toBeCloseTo(0.9);
    expect(r.throughputVsFloorInterval).toEqual({ low: 0.5, high: 1, confidence: 30 / 32 });
    expect(r.vsBaseline?.throughputInterval).toEqual({ low: 0.5, high: 1, confidence: 30 / 32 });
  });

  it('compares toolwire with a baseline build round by round when one ran, and not otherwise', () => {
    const r = computeRatios([
      result('floor-single', load(1000, 10)),
      result('toolwire-single', load(900, 12)),
      result('baseline-single', load(1000, 10)),
      result('baseline-single-r2', load(800, 14)),
      result('toolwire-single-r2', load(880, 13)),
      result('floor-single-r2', load(1000, 10)),
    ]);
    expect(r.vsBaseline?.rounds).toBe(2);
    expect(r.vsBaseline?.perRound.map((x) => x.throughput)).toEqual([0.9, 1.1]);
    expect(r.vsBaseline?.throughput).toBeCloseTo(1.0);
    expect(r.vsBaseline?.p99DiffMs).toBeCloseTo(0.5);
    // The floor ratios are still toolwire against the floor.
    expect(r.throughputVsFloor).toBeCloseTo(0.89);
    expect(computeRatios([result('floor-single', load(1000, 10)), result('toolwire-single', load(900, 12))]).vsBaseline).toBeUndefined();
  });

  it('gives the ratios over the quiet rounds too: those in which the host stole at most 5% of the CPU from either scenario', () => {
    const stolen = (r: ScenarioResult, stealPct: number): ScenarioResult => ({ ...r, machine: { busyPct: 90, stealPct } });
    const r = computeRatios([
      stolen(result('floor-single', load(1000, 10)), 30),
      stolen(result('toolwire-single', load(500, 12)), 2),
      stolen(result('toolwire-single-r2', load(950, 11)), 1),
      stolen(result('floor-single-r2', load(1000, 10)), 4),
      stolen(result('floor-single-r3', load(1000, 10)), 0),
      stolen(result('toolwire-single-r3', load(900, 13)), 5),
      result('floor-single-r4', load(1000, 10)),
      result('toolwire-single-r4', load(100, 13)),
    ]);
    expect(r.rounds).toBe(4);
    expect(r.quietVsFloor).toEqual({ rounds: 2, throughput: expect.closeTo(0.925) as number, p99DiffMs: expect.closeTo(2) as number });
    expect(computeRatios([result('floor-single', load(1000, 10)), result('toolwire-single', load(900, 12))]).quietVsFloor).toBeUndefined();
  });

  it('judges the native client against the WebSocket floor of the same rounds: throughput 1.3x at no higher p99', () => {
    const met = computeRatios([
      result('ws-floor-single', load(1000, 20)),
      result('toolwire-single', load(1400, 19)),
      result('toolwire-single-r2', load(1300, 21)),
      result('ws-floor-single-r2', load(1000, 20)),
    ]);
    expect(met.vsWsFloor?.perRound.map((x) => x.throughput)).toEqual([1.4, 1.3]);
    expect(met.vsWsFloor?.p99DiffMs).toBeCloseTo(0);
    const check = (r: ReturnType<typeof computeRatios>) => checkTargets(r, undefined).find((c) => c.id === 'native-vs-ws-floor')!;
    expect(check(met).met).toBe(true);
    const slower = computeRatios([result('ws-floor-single', load(1000, 20)), result('toolwire-single', load(1400, 27))]);
    expect(check(slower)).toMatchObject({ met: false, measured: '1.400x, p99 +7.00 ms' });
    expect(check(computeRatios([result('floor-single', load(1000, 10)), result('toolwire-single', load(900, 12))])).met).toBeUndefined();
  });

  it('ignores a scenario that failed', () => {
    expect(computeRatios([result('floor-single', load(1000, 10)), result('toolwire-single', undefined)]).throughputVsFloor).toBeUndefined();
  });
});

describe('summarizeResources', () => {
  it('takes RSS growth from the medians of the first and last samples, and CPU per request from the warm-up edge', () => {
    const s = summarizeResources(
      [
        { tMs: -1000, rssBytes: 50, cpuMs: 0, eldP99Ms: undefined, eldMaxMs: undefined },
        ...[100, 300, 100, 110, 120, 110, 500, 110].map((rssBytes, i) => ({ tMs: i * 1000, rssBytes, cpuMs: (i + 1) * 100, eldP99Ms: i, eldMaxMs: i + 1 })),
      ],
      800,
    )!;
    expect(s.rssStartBytes).toBe(100);
    expect(s.rssEndBytes).toBe(110);
    expect(s.rssGrowth).toBeCloseTo(0.1);
    expect(s.rssMaxBytes).toBe(500);
    expect(s.rssFirstBytes).toBe(50);
    expect(s.cpuUsPerRequest).toBeCloseTo(1000);
    expect(s.eldP99MaxMs).toBe(7);
  });

  it("gives the main thread's CPU per request beside the process's when the series has it, and nothing when it has not", () => {
    const series = [
      { tMs: -1000, rssBytes: 1, cpuMs: 0, mainThreadCpuMs: 0, eldP99Ms: undefined, eldMaxMs: undefined },
      ...[1, 2, 3].map((i) => ({ tMs: i * 1000, rssBytes: 1, cpuMs: i * 100, mainThreadCpuMs: i * 80, eldP99Ms: undefined, eldMaxMs: undefined })),
    ];
    const s = summarizeResources(series, 300)!;
    expect(s.cpuUsPerRequest).toBeCloseTo(1000);
    expect(s.mainThreadCpuUsPerRequest).toBeCloseTo(800);
    expect(
      summarizeResources(
        series.map(({ mainThreadCpuMs: _, ...rest }) => rest),
        300,
      )!.mainThreadCpuUsPerRequest,
    ).toBeUndefined();
  });

  it("sums the collector's pauses of the measured phase only, per answered request, with its full collections and the longest", () => {
    const gc = (majorCount: number, majorMaxMs: number, pauseMs: number) => ({ majorCount, majorMaxMs, pauseMs });
    const sample = (tMs: number, w: ReturnType<typeof gc> | undefined) => ({ tMs, rssBytes: 1, cpuMs: 0, eldP99Ms: undefined, eldMaxMs: undefined, gc: w });
    // The warm-up's 40 ms full collection is not the run's; 30 ms of pauses over 600 answers is 50 µs each.
    const s = summarizeResources([sample(-1000, gc(1, 40, 45)), sample(0, gc(0, 0, 5)), sample(1000, gc(2, 12.5, 20)), sample(2000, gc(1, 3, 5))], 600)!;
    expect(s.gc).toEqual({ pauseUsPerRequest: 50, majorCount: 3, majorMaxMs: 12.5 });
    expect(summarizeResources([sample(0, undefined), sample(1000, undefined)], 600)!.gc).toBeUndefined();
  });

  it('reads user and system time from a /proc stat line whose command name holds spaces and brackets', () => {
    // utime 250 and stime 50 ticks, at Linux's 100 a second: 3 s.
    const rest = ['S', '1', '2', '3', '0', '-1', '4194560', '10', '0', '0', '0', '250', '50', '0', '0', '20', '0', '12'];
    expect(procStatCpuMs(`4321 (node (worker) x) ${rest.join(' ')}`)).toBe(3000);
  });

  it('has nothing to say before the measured phase', () => {
    expect(summarizeResources([{ tMs: -1, rssBytes: 1, cpuMs: 0, eldP99Ms: undefined, eldMaxMs: undefined }], 1)).toBeUndefined();
  });
});

const options = {
  ...BENCH_DEFAULTS,
  targets: ['floor', 'toolwire', 'python'],
  requests: undefined,
  baselineDir: undefined,
  cpuProf: false,
  outDir: 'x',
} as const;

describe('one call in flight', () => {
  const oneCall = [
    result('floor-c1-persistent', load(300, 4, 2.9)),
    result('toolwire-c1-persistent', load(290, 4.3, 2.95)),
    result('floor-c1-non-persistent', load(1200, 1.5, 0.72)),
    result('toolwire-c1-non-persistent', load(1150, 2.2, 0.8)),
  ];

  it('pairs floor and toolwire per request topic kind and judges the one-call targets', () => {
    const r = computeRatios(oneCall);
    expect(r.oneCall.map((x) => x.kind)).toEqual(['persistent', 'non-persistent']);
    expect(r.oneCall[0]!.p50AddedMs).toBeCloseTo(0.05);
    expect(r.oneCall[1]!.p99AddedMs).toBeCloseTo(0.7);
    const checks = Object.fromEntries(checkTargets(r, undefined).map((c) => [c.id, c]));
    expect(checks['one-call-p50']).toMatchObject({ met: true, measured: 'persistent +0.05 ms, non-persistent +0.08 ms' });
    // non-persistent adds 0.7 ms at p99: missed.
    expect(checks['one-call-p99']?.met).toBe(false);
    expect(checks['one-call-under-1ms']).toMatchObject({ met: true, measured: '0.80 ms (non-persistent)' });
  });

  it('leaves out a kind whose pair is incomplete, and reports a table of what was measured', () => {
    const r = computeRatios(oneCall.slice(0, 3));
    expect(r.oneCall.map((x) => x.kind)).toEqual(['persistent']);
    expect(checkTargets(r, undefined).find((c) => c.id === 'one-call-under-1ms')).toMatchObject({ met: false, measured: '2.95 ms (persistent)' });
    const md = reportOf(oneCall, r);
    expect(md).toContain('## One call in flight');
    expect(md).toContain('| persistent | 2.90 / 4.00 / 6.00 | 2.95 / 4.30 / 6.45 | 0.05 / 0.30 / 0.45 |');
  });

  it('says per scenario what the broker dropped on each topic, and n/a where nothing was counted', () => {
    const rows = [
      { ...result('floor-single', load(1000, 10)), drops: { requests: 0, answers: 11 } },
      { ...result('toolwire-single', load(1000, 10)), drops: { requests: undefined, answers: 3 } },
      result('floor-single-r2', load(1000, 10)),
    ];
    const lines = reportOf(rows, computeRatios(rows)).split('\n');
    const row = (id: string) => lines.find((l) => l.startsWith(`| ${id} |`));
    expect(row('floor-single')).toMatch(/\| 0 \/ 11 \|$/);
    expect(row('toolwire-single')).toMatch(/\| n\/a \/ 3 \|$/);
    expect(row('floor-single-r2')).toMatch(/\| n\/a \/ n\/a \|$/);
  });
});

describe('planScenarios', () => {
  it('knows the floor stream but measures it only when named', () => {
    const o = { ...options, broker: undefined, python: undefined } as BenchOptions;
    expect(allScenarios(o).map((s) => s.id)).toContain('floor-stream');
    expect(planScenarios(o).map((s) => s.id)).not.toContain('floor-stream');
  });

  it('measures the three-way single comparison first, then toolwire streamed, then the long RSS run', () => {
    const ids = planScenarios({ ...options, broker: undefined, python: undefined }).map((s) => s.id);
    expect(ids).toEqual([
      'floor-single',
      'toolwire-single',
      'python-single',
      'floor-c1-persistent',
      'toolwire-c1-persistent',
      'toolwire-c1-non-persistent',
      'floor-c1-non-persistent',
      'toolwire-stream',
      'toolwire-long',
    ]);
  });

  it("measures one call in flight on both request topic kinds, the run's own first, in alternating order", () => {
    const o = { ...options, requestPersistence: 'non-persistent', streamChunks: 0, longRequests: 0, broker: undefined, python: undefined } as BenchOptions;
    const c1 = planScenarios(o).filter((s) => s.concurrency === 1);
    expect(c1.map((s) => [s.id, s.requestPersistence, s.durationMs])).toEqual([
      ['floor-c1-non-persistent', 'non-persistent', 10_000],
      ['toolwire-c1-non-persistent', 'non-persistent', 10_000],
      ['toolwire-c1-persistent', 'persistent', 10_000],
      ['floor-c1-persistent', 'persistent', 10_000],
    ]);
    // The memory transport has no topic kinds; --one-call 0 leaves them out.
    expect(
      planScenarios({ ...o, transport: 'memory' })
        .filter((s) => s.concurrency === 1)
        .map((s) => s.id),
    ).toEqual(['floor-c1-non-persistent', 'toolwire-c1-non-persistent']);
    expect(planScenarios({ ...o, oneCallMs: 0 }).filter((s) => s.concurrency === 1)).toEqual([]);
  });

  it('repeats the floor/toolwire pair for extra rounds, each first once in every two rounds', () => {
    const ids = planScenarios({
      ...options,
      rounds: 3,
      streamChunks: 0,
      longRequests: 0,
      oneCallMs: 0,
      broker: undefined,
      python: undefined,
    }).map((s) => s.id);
    expect(ids).toEqual(['floor-single', 'toolwire-single', 'python-single', 'toolwire-single-r2', 'floor-single-r2', 'toolwire-single-r3', 'floor-single-r3']);
  });

  it('puts a baseline build in every round beside the floor and toolwire, each target in every place', () => {
    const ids = planScenarios({
      ...options,
      targets: ['floor', 'toolwire', 'baseline'],
      rounds: 3,
      streamChunks: 0,
      longRequests: 0,
      oneCallMs: 0,
      broker: undefined,
      python: undefined,
    }).map((s) => s.id);
    expect(ids).toEqual([
      'floor-single',
      'toolwire-single',
      'baseline-single',
      'baseline-single-r2',
      'toolwire-single-r2',
      'floor-single-r2',
      'toolwire-single-r3',
      'baseline-single-r3',
      'floor-single-r3',
    ]);
  });

  it('puts each of three targets first, between and last twice in six rounds, and each of two first in half the rounds', () => {
    const three = ['floor', 'toolwire', 'baseline'] as const;
    const orders = [1, 2, 3, 4, 5, 6].map((r) => roundOrder(three, r).join(','));
    expect(new Set(orders).size).toBe(6);
    for (const t of three) for (let place = 0; place < 3; place++) expect(orders.filter((o) => o.split(',')[place] === t)).toHaveLength(2);
    const two = [1, 2, 3, 4, 5, 6, 7, 8].map((r) => roundOrder(['floor', 'toolwire'], r)[0]);
    expect(two.filter((t) => t === 'floor')).toHaveLength(4);
    // Every two rounds in a row, each goes first once: a drift over the run touches both alike.
    for (let r = 0; r < two.length; r += 2) expect(new Set(two.slice(r, r + 2)).size).toBe(2);
  });

  it('bounds each scenario by requests when asked, and skips what is switched off', () => {
    const s = planScenarios({
      ...options,
      targets: ['toolwire'],
      requests: 10,
      streamChunks: 0,
      longRequests: 0,
      oneCallMs: 0,
      broker: undefined,
      python: undefined,
    });
    expect(s).toEqual([expect.objectContaining({ id: 'toolwire-single', requests: 10, durationMs: undefined })]);
  });
});

describe('markdown and SVG reports', () => {
  const scenarios = [result('floor-single', load(1000, 10)), result('toolwire-single', load(950, 11)), result('python-single', undefined)];
  const ratios = computeRatios(scenarios);
  const report: BenchReport = {
    runId: 'run1',
    startedAt: 'a',
    finishedAt: 'b',
    command: 'npm run bench',
    loadAverageEnd: 2,
    machine: {
      cpus: 2,
      cpuModel: 'cpu',
      memoryGiB: 24,
      freeMemoryGiB: 20,
      os: 'linux',
      node: 'v20',
      pulsar: '3.3.6',
      python: '3.11',
      trustgraphBase: '2.11.1',
      loadAverage: 0.5,
    },
    options: { ...options, broker: 'http://b' },
    scenarios,
    ratios,
    checks: checkTargets(ratios, 200_000),
  };

  it('has a row per scenario, failures included, and the targets table', () => {
    const md = markdownReport(report, 'run1.svg');
    expect(md).toContain('| floor-single |');
    expect(md).toContain('| toolwire-single |');
    expect(md).toContain('| CPU µs/req (main thread) |');
    expect(md).toMatch(/\| python-single \| .* \| failed: boom \|/);
    expect(md).toContain('toolwire throughput >= 0.9x the floor | 0.950x | yes');
    expect(md).toContain('![latency, throughput and RSS](run1.svg)');
  });

  it("puts the main thread's CPU per request in brackets after the process's, where it was read", () => {
    const [first, ...rest] = report.scenarios;
    const withMain = { ...first!, resources: { ...first!.resources!, cpuUsPerRequest: 1234.4, mainThreadCpuUsPerRequest: 987.6 } };
    const md = markdownReport({ ...report, scenarios: [withMain, ...rest] }, undefined);
    expect(md).toContain('| 1,234 (988) |');
    // Without it (the Python peer, a platform without /proc), the process's figure alone.
    expect(markdownReport(report, undefined)).not.toContain('(988)');
  });

  it("splits the machine's CPU an answer took into the target's, the agents' and the rest, only where the targets ran one after the other", () => {
    const [first, ...rest] = report.scenarios;
    // Half of 2 CPUs at 1,000 answers a second: 1,000 µs an answer; 300 the target's, 200 the agents' (10% of the machine).
    const measured = { ...first!, machine: { busyPct: 50, stealPct: 1, ownPct: 10 }, resources: { ...first!.resources!, cpuUsPerRequest: 300 } };
    const scenarios = [measured, ...rest];
    expect(markdownReport({ ...report, scenarios }, undefined)).toMatch(/\| 50 \/ 1 \| 1,000 \/ 300 \/ 200 \/ 500 \|/);
    // Without the agents' own share (a target in the bench's process), what cannot be split is n/a.
    const unsplit = [{ ...measured, machine: { busyPct: 50, stealPct: 1 } }, ...rest];
    expect(markdownReport({ ...report, scenarios: unsplit }, undefined)).toMatch(/\| 50 \/ 1 \| 1,000 \/ 300 \/ n\/a \/ n\/a \|/);
    // Together, the round's targets shared the machine and the agents' process: no answer of one can be charged all of it.
    const together = markdownReport({ ...report, scenarios, options: { ...report.options, together: true } }, undefined);
    expect(together).toMatch(/\| 50 \/ 1 \| n\/a \|/);
    expect(together).toContain('| machine CPU µs/req: all / target / agents / rest |');
  });

  it('gives the interval of the median ratio beside it once there are five rounds', () => {
    const five = computeRatios(fiveRounds);
    const md = markdownReport({ ...report, scenarios: fiveRounds, ratios: five, checks: checkTargets(five, undefined) }, undefined);
    expect(md).toContain('toolwire/floor throughput: 0.900 (the median lies in 0.500-1.000 with 93% confidence); p99 added');
    expect(md).toMatch(/toolwire\/baseline \(.*\) throughput: 0\.900 \(the median lies in 0\.500-1\.000 with 93% confidence\); p99/);
    expect(markdownReport(report, undefined)).not.toContain('the median lies in');
  });

  it('draws a well-formed SVG with escaped labels and one series per answered scenario', () => {
    const svg = svgChart(scenarios, 'a <title> & more');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('a &lt;title&gt; &amp; more');
    expect(svg.match(/<polyline/g)).toHaveLength(4); // latency + RSS lines for the two answered scenarios
  });
});

describe('topicsFor', () => {
  it('gives each scenario fresh topics of the kinds asked for', () => {
    const tg = topicsFor('run1', 'toolwire-single', { requestPersistence: 'non-persistent', responsePersistence: 'non-persistent' });
    expect(tg).toEqual({
      serviceId: 'bench-run1-toolwire-single',
      requestTopic: 'non-persistent://tg/request/bench-run1-toolwire-single-request',
      responseTopic: 'non-persistent://tg/response/bench-run1-toolwire-single',
      subscription: 'bench-run1-toolwire-single-request',
    });
    const durable = topicsFor('run1', 'floor-single', { requestPersistence: 'persistent', responsePersistence: 'persistent' });
    expect(durable.requestTopic).toBe('persistent://tg/flow/bench-run1-floor-single-request');
    expect(durable.responseTopic).toBe('persistent://tg/response/bench-run1-floor-single');
  });
});

describe('warmBrokerFirst', () => {
  it('gives the first scenario on a broker the broker warm-up, and leaves the rest and the memory transport alone', () => {
    const o = { ...options, broker: undefined, python: undefined } as BenchOptions;
    const planned = planScenarios(o);
    const warmed = warmBrokerFirst(planned, o);
    expect(warmed[0]!.warmupMs).toBe(BROKER_WARMUP_MS);
    expect(warmed.slice(1)).toEqual(planned.slice(1));
    const long = planned.find((s) => s.id === 'toolwire-long')!;
    expect(warmBrokerFirst([long], o)[0]!.warmupMs).toBe(Math.max(long.warmupMs!, BROKER_WARMUP_MS));
    expect(warmBrokerFirst(planned, { ...o, transport: 'memory' })).toEqual(planned);
  });
});
