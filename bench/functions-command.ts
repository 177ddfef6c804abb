import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, UsageError } from '../src/cli/args.js';
import type { CommandIo } from '../src/cli/command.js';
import { createLogger } from '../src/logging.js';
import { BENCH_DEFAULTS, type BenchOptions } from './bench-options.js';
import type { ScenarioResult } from './bench-runner.js';
import { newRunId, topicsFor } from './bench-runner.js';
import { OwnBroker } from './own-broker.js';
import { ProgressReporter } from './progress.js';
import { echoFunctionJar } from './pulsar-function/echo-function-jar.js';
import { runBench } from './run-bench.js';
import { withoutRound } from './scenario-id.js';
import { functionsToolStart, toolwireToolStart, type ToolStartFigures } from './tool-start.js';
import { transportFor } from './transport-for.js';

export const FUNCTIONS_HELP = `Usage: npm run bench -- functions [--rounds R] [-d SECONDS] [-c K] [--tools N] [--out DIR]

toolwire beside what a Pulsar user would write instead: the echo tool as a Pulsar Function
(bench/pulsar-function/EchoToolFunction.java, compiled with the broker distribution's jars
into ~/.cache/toolwire, run with 'pulsar-admin functions localrun'). On a broker of its own
(scripts/pulsar-broker.sh), with the same topics and load, side by side in one run:
  1. the floor, toolwire and the function under K agents, R rounds in changing order:
     throughput, p50/p99, CPU a request and RSS (median over rounds);
  2. the start of one more tool, N times each: toolwire, a descriptor written to a running
     worker until the new tool answers; Functions, one more localrun until it answers.
Writes <out>/functions-latest.md and .json (the load run's own report under <out>/functions/).

  --rounds R        rounds of the three targets (default 3)
  -d, --duration S  per scenario (default ${BENCH_DEFAULTS.durationMs / 1000})
  --warmup S        unrecorded load first (default ${BENCH_DEFAULTS.warmupMs / 1000})
  -c, --concurrency K  requests in flight (default ${BENCH_DEFAULTS.concurrency})
  --tools N         one-more-tool starts of each (default 3)
  --out DIR         results directory (default ${BENCH_DEFAULTS.outDir})
`;

function count(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`${name} must be a number >= ${min}`);
  return n;
}

/** One target's load figures, the median of its rounds. */
export interface FunctionsLoadRow {
  readonly target: string;
  readonly description: string;
  readonly rounds: number;
  readonly throughputPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number | undefined;
  readonly rssMaxBytes: number | undefined;
  readonly failedRounds: number;
}

const median = (values: readonly number[]): number | undefined => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

export function loadRows(results: readonly ScenarioResult[]): FunctionsLoadRow[] {
  const targets = [...new Set(results.map((r) => r.scenario.target))];
  return targets.map((target) => {
    const mine = results.filter((r) => r.scenario.target === target && withoutRound(r.scenario.id) === `${target}-single`);
    const ok = mine.filter((r) => r.load !== undefined && r.load.answered > 0);
    const pick = (f: (r: ScenarioResult) => number | undefined) => median(ok.map(f).filter((v): v is number => v !== undefined));
    return {
      target,
      description: mine[0]?.description ?? target,
      rounds: ok.length,
      throughputPerSec: pick((r) => r.load?.throughputPerSec) ?? Number.NaN,
      p50Ms: pick((r) => r.load?.latency.p50Ms) ?? Number.NaN,
      p99Ms: pick((r) => r.load?.latency.p99Ms) ?? Number.NaN,
      cpuUsPerRequest: pick((r) => r.resources?.cpuUsPerRequest),
      rssMaxBytes: pick((r) => r.resources?.rssMaxBytes),
      failedRounds: mine.length - ok.length,
    };
  });
}

const mb = (bytes: number | undefined) => (bytes === undefined ? 'n/a' : `${(bytes / 2 ** 20).toFixed(1)} MB`);

export function functionsMarkdown(rows: readonly FunctionsLoadRow[], starts: readonly ToolStartFigures[], header: string): string {
  const lines = [
    header,
    '',
    '| target | throughput | p50 | p99 | CPU a request | RSS (peak) | RSS per 1,000 req/s | rounds |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.target} | ${Math.round(r.throughputPerSec)} req/s | ${r.p50Ms.toFixed(2)} ms | ${r.p99Ms.toFixed(2)} ms | ${r.cpuUsPerRequest === undefined ? 'n/a' : `${Math.round(r.cpuUsPerRequest)} µs`} | ${mb(r.rssMaxBytes)} | ${r.rssMaxBytes === undefined ? 'n/a' : mb((r.rssMaxBytes * 1000) / r.throughputPerSec)} | ${r.rounds}${r.failedRounds > 0 ? ` (${r.failedRounds} failed)` : ''} |`,
    ),
    '',
    '| one more tool | started after (median; each) | resident memory it added (median) |',
    '| --- | ---: | ---: |',
    ...starts.map((s) => {
      const each = s.startMs.map((ms) => Math.round(ms)).join(', ');
      return `| ${s.target}: ${s.how} | ${Math.round(median(s.startMs) ?? Number.NaN)} ms (${each}) | ${mb(median(s.rssAddedBytes))} |`;
    }),
    '',
    ...rows.map((r) => `- ${r.target}: ${r.description}`),
  ];
  return `${lines.join('\n')}\n`;
}

export async function functionsCommand(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, {
    rounds: { type: 'string' },
    duration: { type: 'string', short: 'd' },
    warmup: { type: 'string' },
    concurrency: { type: 'string', short: 'c' },
    tools: { type: 'string' },
    out: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(FUNCTIONS_HELP);
    return 0;
  }
  const outDir = values.out ?? BENCH_DEFAULTS.outDir;
  const tools = Math.trunc(count(values.tools, '--tools', 3, 1));
  const log = createLogger({ level: io.env['LOG_LEVEL'] ?? 'warn' });
  const say = (line: string) => io.stderr.write(`${line}\n`);
  say('functions: building the echo function (once) and starting a broker of its own...');
  await echoFunctionJar(io.signal);
  const broker = await OwnBroker.start(io.signal);
  try {
    const options: BenchOptions = {
      transport: 'pulsar-ws',
      broker: broker.endpoints,
      targets: ['floor', 'toolwire', 'functions'],
      concurrency: count(values.concurrency, '--concurrency', BENCH_DEFAULTS.concurrency, 1),
      rounds: Math.trunc(count(values.rounds, '--rounds', 3, 1)),
      requests: undefined,
      durationMs: count(values.duration, '--duration', BENCH_DEFAULTS.durationMs / 1000, 1) * 1000,
      warmupMs: count(values.warmup, '--warmup', BENCH_DEFAULTS.warmupMs / 1000, 0) * 1000,
      longWarmupMs: 0,
      argumentBytes: BENCH_DEFAULTS.argumentBytes,
      streamChunks: 0,
      oneCallMs: 0,
      longRequests: 0,
      requestPersistence: BENCH_DEFAULTS.requestPersistence,
      responsePersistence: BENCH_DEFAULTS.responsePersistence,
      sampleIntervalMs: BENCH_DEFAULTS.sampleIntervalMs,
      answerTimeoutMs: BENCH_DEFAULTS.answerTimeoutMs,
      workerLogLevel: BENCH_DEFAULTS.workerLogLevel,
      cpuProf: false,
      outDir: join(outDir, 'functions'),
      python: undefined,
      baselineDir: undefined,
    };
    const progress = new ProgressReporter(io.stderr, Boolean((io.stderr as { isTTY?: boolean }).isTTY));
    const command = `npm run bench -- functions ${io.argv.join(' ')}`.trim();
    const { report } = await runBench(options, command, { log, progress, signal: io.signal });
    const rows = loadRows(report.scenarios);

    const agents = await transportFor('pulsar-ws', broker.endpoints, log);
    const starts: ToolStartFigures[] = [];
    try {
      for (const measure of [toolwireToolStart, functionsToolStart]) {
        const runId = newRunId();
        say(`functions: one more tool (${measure === toolwireToolStart ? 'toolwire' : 'functions'}), ${tools} times...`);
        starts.push(
          await measure({ broker: broker.endpoints, transport: agents, tools, topics: (n) => topicsFor(runId, `start-${n}`, options), log, signal: io.signal }),
        );
      }
    } finally {
      await agents.close();
    }
    const header = `npm run bench -- functions (${report.runId}, ${report.startedAt}): pulsar-ws agents, concurrency ${options.concurrency}, ${options.argumentBytes} B arguments, ${options.rounds} rounds of ${options.durationMs / 1000} s; ${report.machine.cpus} CPUs`;
    const markdown = functionsMarkdown(rows, starts, header);
    await mkdir(outDir, { recursive: true });
    await writeFile(join(outDir, 'functions-latest.md'), markdown);
    await writeFile(join(outDir, 'functions-latest.json'), `${JSON.stringify({ runId: report.runId, load: rows, toolStart: starts }, null, 2)}\n`);
    io.stdout.write(`\n${markdown}\n${join(outDir, 'functions-latest.md')}\n`);
    return rows.some((r) => r.failedRounds > 0) ? 1 : 0;
  } finally {
    await broker.destroy();
  }
}
