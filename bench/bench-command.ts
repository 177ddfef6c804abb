import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from './child-process.js';
import { createLogger } from '../src/logging.js';
import { BENCH_DEFAULTS, type BenchOptions } from './bench-options.js';
import { TargetName } from './targets/target.js';
import type { BenchTransportKind } from './transport-for.js';
import { parse, UsageError } from '../src/cli/args.js';
import type { Command, CommandIo } from '../src/cli/command.js';
import { roundedFigures, type CallBenchOptions } from './call-figures.js';

const HELP = `Usage: npm run bench -- [options]
       npm run bench -- drills [--long] [options]   (fault drills; see 'npm run bench -- drills --help')
       npm run bench -- mcp [options]               (the mcp plugin against the MCP SDK, and mcp serve)
       npm run bench -- openapi [options]           (the openapi plugin against calling the API directly)
       npm run bench -- dashboard [--seconds S]     (dashboards/toolwire.json rendered from a real run by Prometheus)
       npm run bench -- watch-reload [options]      (run --watch: save -> new code served, log lines, RSS over saves)
       npm run bench -- fleet [--services 100,1000] (what a fleet costs as it grows: start, a one-tool change, validate, RSS)
       npm run bench -- functions [options]         (toolwire beside the same echo as a Pulsar Function: load, one more tool's start)
       npm run bench -- cold-start [options]        (process start to the first answer on a broker; RSS and heap by services)

Load generator that behaves as agents (K requests in flight, each waiting for its answer,
correlated by the id property) and measures, in one run against one broker, each on fresh
topics: the floor (a minimal echo on the same transport), toolwire (the real worker as its
own process) and TrustGraph's Python DynamicToolService. Writes JSON, Markdown and an SVG
chart under bench/results/. Starts a local broker (scripts/pulsar-broker.sh) and the Python
environment (scripts/python-env.sh) when they are missing.

  -T, --transport KIND     pulsar-ws (default) | pulsar | memory (in-process quick check)
      --agent-transport K  the agents' transport when not --transport (pulsar-ws | pulsar)
      --pulsar-url URL     default $PULSAR_URL or pulsar://127.0.0.1:6650
      --admin-url URL      default $PULSAR_ADMIN_URL or http://127.0.0.1:8080
      --targets LIST       floor,toolwire,python (default all; python needs a broker); also
                           ws-floor: the floor on the WebSocket API, its agents too, in a run
                           on another transport (the native client is judged against it);
                           functions: the echo as a Pulsar Function (see 'functions')
      --baseline DIR       also run another toolwire build (a checkout with dist/ built, e.g.
                           a git worktree of the commit before a change) as target 'baseline',
                           in the same rounds: the change measured side by side
      --baseline-env K=V   the baseline's own environment (repeatable, or comma-separated): a
                           setting measured side by side, e.g. --baseline . --baseline-env
                           NODE_OPTIONS=--max-semi-space-size=32
      --scenarios LIST     only these scenario ids (e.g. toolwire-single,floor-single)
  -c, --concurrency K      requests in flight (default ${BENCH_DEFAULTS.concurrency})
      --rounds N           rounds of the targets, the order changing each round; ratios are medians (default ${BENCH_DEFAULTS.rounds})
      --together           each round's targets at the same time, each with its own agents: the
                           machine's speed is then the same for all, so their CPU a request and
                           the share of the machine each wins compare like for like
  -n, --requests N         requests per scenario (default: --duration)
  -d, --duration SECONDS   per scenario (default ${BENCH_DEFAULTS.durationMs / 1000})
      --warmup SECONDS     unrecorded load first (default ${BENCH_DEFAULTS.warmupMs / 1000})
      --payload BYTES      size of the arguments JSON (default ${BENCH_DEFAULTS.argumentBytes})
      --chunks C           stream scenarios with C chunks per answer (default ${BENCH_DEFAULTS.streamChunks}; 0: none)
      --one-call SECONDS   floor and toolwire with one call in flight, on persistent and
                           non-persistent request topics, each this long (default ${BENCH_DEFAULTS.oneCallMs / 1000}; 0: none)
      --long N             toolwire RSS run of N requests (default ${BENCH_DEFAULTS.longRequests}; 0: none)
      --long-warmup SECONDS  its warm-up, V8's heap growing to size (default ${BENCH_DEFAULTS.longWarmupMs / 1000})
      --request-topics P   persistent (default) | non-persistent
      --response-topics P  non-persistent (default, as TrustGraph) | persistent (no drops under load)
      --answer-timeout S   a request unanswered after S seconds counts as lost (default ${BENCH_DEFAULTS.answerTimeoutMs / 1000})
      --worker-log-level L the worker's LOG_LEVEL (default ${BENCH_DEFAULTS.workerLogLevel}, as in production)
      --cpu-prof           write V8 CPU profiles of the floor and worker processes
      --perf               on-CPU profiles of the floor and worker processes with Linux perf
                           (its software clock: no hardware counters needed) over each measured
                           window; the report splits their main thread's CPU a request by area
      --out DIR            results directory (default ${BENCH_DEFAULTS.outDir})
      --quick              memory transport, 3 s per scenario, no long run: a local smoke check
`;

function num(v: string | undefined, name: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`${name} must be a number >= ${min}`);
  return n;
}

// The bench's modules load only when a bench command runs: `toolwire run` never pays for them.
async function serveFloorCommand(io: CommandIo): Promise<number> {
  const { serveFloor } = await import('./serve-floor.js');
  const { values } = parse(io.argv, {
    transport: { type: 'string' },
    'pulsar-url': { type: 'string' },
    'admin-url': { type: 'string' },
    'request-topic': { type: 'string' },
    'response-topic': { type: 'string' },
    subscription: { type: 'string' },
    concurrency: { type: 'string' },
  });
  const need = (k: 'request-topic' | 'response-topic' | 'subscription') => {
    const v = values[k];
    if (!v) throw new UsageError(`--${k} is required`);
    return v;
  };
  const transport = (values.transport ?? 'pulsar-ws') as BenchTransportKind;
  const broker =
    values['admin-url'] && values['pulsar-url']
      ? { pulsarUrl: values['pulsar-url'], adminUrl: values['admin-url'], ...(io.env['PULSAR_TOKEN'] ? { token: io.env['PULSAR_TOKEN'] } : {}) }
      : undefined;
  return serveFloor(io, {
    transport,
    broker,
    requestTopic: need('request-topic'),
    responseTopic: need('response-topic'),
    subscription: need('subscription'),
    concurrency: num(values.concurrency, '--concurrency', 1) ?? BENCH_DEFAULTS.concurrency,
  });
}

const HOT_PATH_HELP = `Usage: npm run bench -- hot-path [-n N] [-c K] [--chunks C] [--stream] [--log-level L] [--tracing] [--tool T] [--target worker|floor] [--request-topics persistent|non-persistent]

The worker's own cost per request with no broker (the real Worker on the in-memory
transport, every answer counted): wall and CPU microseconds per request. Requests are
queued up front on a persistent request topic; on a non-persistent one K are kept in
flight (what finds no room is dropped, as on a broker). Use it to compare a hot-path
change before and after; each figure is the median of --rounds rounds. It measures the
source it was built with (build/src, not dist): to compare two builds, run each checkout's
own build/bench/main.js, alternated.
--target floor answers the same load with the bench's floor (a bare echo on the same
transport): the worker's figure less the floor's is what toolwire itself costs a request.
--tracing switches OpenTelemetry on, exporting every span over OTLP/HTTP to a receiver in
the process that drops them. --tool picks the echo tool: builtin (default), or a module
file written as function (defineTool(fn)) or typed (a zod schema checked on every call),
to put a typed tool beside the function form (no --chunks with those).
`;

async function hotPathCommand(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, {
    requests: { type: 'string', short: 'n' },
    concurrency: { type: 'string', short: 'c' },
    chunks: { type: 'string' },
    stream: { type: 'boolean' },
    'log-level': { type: 'string' },
    rounds: { type: 'string' },
    tracing: { type: 'boolean' },
    tool: { type: 'string' },
    target: { type: 'string' },
    'request-topics': { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(HOT_PATH_HELP);
    return 0;
  }
  const tool = values.tool ?? 'builtin';
  if (tool !== 'builtin' && tool !== 'function' && tool !== 'typed') throw new UsageError('--tool is builtin, function or typed');
  const target = values.target ?? 'worker';
  if (target !== 'worker' && target !== 'floor') throw new UsageError('--target is worker or floor');
  if (target === 'floor' && tool !== 'builtin') throw new UsageError('--target floor answers as the builtin echo: no --tool');
  const requestTopics = values['request-topics'] ?? 'persistent';
  if (requestTopics !== 'persistent' && requestTopics !== 'non-persistent') throw new UsageError('--request-topics is persistent or non-persistent');
  const { measureHotPath } = await import('./hot-path.js');
  // --tracing: the OpenTelemetry SDK on, exporting every span to a receiver that drops them.
  const tracing = values.tracing ? await (await import('./trace-sink.js')).startTraceSink() : undefined;
  type HotPathResult = Awaited<ReturnType<typeof measureHotPath>>;
  const rounds = num(values.rounds, '--rounds', 1) ?? 5;
  const requests = num(values.requests, '--requests', 1) ?? 50_000;
  const results: HotPathResult[] = [];
  for (let i = 0; i < rounds; i++) {
    results.push(
      await measureHotPath({
        requests,
        warmupRequests: Math.min(20_000, requests),
        concurrency: num(values.concurrency, '--concurrency', 1) ?? BENCH_DEFAULTS.concurrency,
        argumentBytes: BENCH_DEFAULTS.argumentBytes,
        chunks: num(values.chunks, '--chunks', 0) ?? 0,
        stream: values.stream === true,
        logLevel: values['log-level'] ?? 'info',
        tool,
        target,
        requestTopics,
      }),
    );
  }
  await tracing?.close();
  const median = (f: (r: HotPathResult) => number) => results.map(f).sort((a, b) => a - b)[Math.floor(results.length / 2)]!;
  io.stdout.write(
    `${JSON.stringify({ target, requestTopics, rounds, requests, wallUsPerRequest: +median((r) => r.wallUsPerRequest).toFixed(2), cpuUsPerRequest: +median((r) => r.cpuUsPerRequest).toFixed(2), requestsPerSec: Math.round(median((r) => r.requestsPerSec)) })}\n`,
  );
  return 0;
}

const MCP_HELP = `Usage: npm run bench -- mcp [--sequential N] [--concurrency K] [--calls N] [--rounds R]

server-everything's echo (the MCP project's reference server, stdio) called directly with
the MCP SDK's Client, against the same call made as an agent makes it, through a worker
(memory transport) and the mcp plugin; rounds alternated, the best of each reported. Then
'mcp serve' (streamable HTTP, embedded worker) under K concurrent client calls.
Defaults: 1000 sequential, K 64, 5000 concurrent calls, 3 rounds.
`;

/** The flags of the in-process call benches (mcp, openapi). */
const CALL_BENCH_FLAGS = { sequential: { type: 'string' }, concurrency: { type: 'string' }, calls: { type: 'string' }, rounds: { type: 'string' } } as const;

function callBenchOptions(values: {
  sequential?: string | undefined;
  concurrency?: string | undefined;
  calls?: string | undefined;
  rounds?: string | undefined;
}): CallBenchOptions {
  return {
    sequential: num(values.sequential, '--sequential', 1) ?? 1000,
    concurrency: num(values.concurrency, '--concurrency', 1) ?? 64,
    concurrentCalls: num(values.calls, '--calls', 1) ?? 5000,
    rounds: num(values.rounds, '--rounds', 1) ?? 3,
  };
}

async function mcpBenchCommand(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, CALL_BENCH_FLAGS, false);
  if (values.help) {
    io.stdout.write(MCP_HELP);
    return 0;
  }
  const { runMcpBench } = await import('./mcp-bench.js');
  const r = await runMcpBench(callBenchOptions(values));
  const round = (x: number) => Math.round(x * 100) / 100;
  io.stdout.write(
    `${JSON.stringify({ direct: roundedFigures(r.direct), plugin: roundedFigures(r.plugin), serve: roundedFigures(r.serve), p50Ratio: round(r.p50Ratio), throughputRatio: round(r.throughputRatio) })}\n`,
  );
  return 0;
}

const OPENAPI_HELP = `Usage: npm run bench -- openapi [--sequential N] [--concurrency K] [--calls N] [--rounds R] [--api-delay-ms D]

A local JSON API (node:http on loopback, answering after D ms) called directly with undici's
request, against the same call made as an agent makes it, through a worker (memory
transport) and the openapi plugin; and, for the worker's own share, the same path to the
built-in echo module. Rounds alternated, the best of each reported.
Defaults: 1000 sequential, K 64, 5000 concurrent calls, 3 rounds, D 0.
`;

async function openApiBenchCommand(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, { ...CALL_BENCH_FLAGS, 'api-delay-ms': { type: 'string' } }, false);
  if (values.help) {
    io.stdout.write(OPENAPI_HELP);
    return 0;
  }
  const { runOpenApiBench } = await import('./openapi-bench.js');
  const r = await runOpenApiBench({ ...callBenchOptions(values), apiDelayMs: num(values['api-delay-ms'], '--api-delay-ms', 0) ?? 0 });
  const round = (x: number) => Math.round(x * 100) / 100;
  io.stdout.write(
    `${JSON.stringify({ direct: roundedFigures(r.direct), plugin: roundedFigures(r.plugin), worker: roundedFigures(r.worker), p50Ratio: round(r.p50Ratio), throughputRatio: round(r.throughputRatio) })}\n`,
  );
  return 0;
}

const DASHBOARD_HELP = `Usage: npm run bench -- dashboard [--seconds S]

dashboards/toolwire.json rendered from a real run: a worker (memory transport) under S
seconds of mixed load (default 60), scraped each second by Prometheus (built once from the
Go module proxy into the cache), each panel's queries evaluated by it, drawn to
bench/results/dashboard-latest.svg (and .png where rsvg-convert is installed).
`;

async function dashboardCommand(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, { seconds: { type: 'string' } }, false);
  if (values.help) {
    io.stdout.write(DASHBOARD_HELP);
    return 0;
  }
  const { renderDashboard } = await import('./dashboard/render-dashboard.js');
  const r = await renderDashboard({ seconds: num(values.seconds, '--seconds', 5) ?? 60, out: join(REPO_ROOT, 'bench', 'results') });
  io.stdout.write(`${JSON.stringify(r)}\n`);
  return 0;
}

async function profileSummaryCommand(io: CommandIo): Promise<number> {
  const { positionals, values } = parse(io.argv, { top: { type: 'string' } });
  if (values.help || positionals.length === 0) {
    io.stdout.write(
      'Usage: npm run bench -- profile-summary FILE.cpuprofile... [--top N]\n\nSelf time by area and by function of a V8 CPU profile (npm run bench -- --cpu-prof writes them).\n',
    );
    return values.help ? 0 : 2;
  }
  const { summarizeCpuProfile, formatProfileSummary } = await import('./cpu-profile-summary.js');
  for (const f of positionals) io.stdout.write(`== ${f}\n${formatProfileSummary(await summarizeCpuProfile(f, num(values.top, '--top', 1) ?? 30))}\n`);
  return 0;
}

/** `K=V` pairs, each given alone or comma-separated, as an environment. */
function parseEnvPairs(values: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of values.flatMap((v) => v.split(','))) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--baseline-env wants K=V, got "${pair}"`);
    env[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return env;
}

export const benchCommand: Command = {
  name: 'bench',
  summary: 'benchmark toolwire against the floor and the Python peer; fault drills',
  help: HELP,
  async run(io) {
    const sub = io.argv[0];
    if (sub === 'drills') return (await import('./drills/drills-command.js')).drillsCommand.run({ ...io, argv: io.argv.slice(1) });
    if (sub === 'serve-floor') return serveFloorCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'hot-path') return hotPathCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'mcp') return mcpBenchCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'openapi') return openApiBenchCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'dashboard') return dashboardCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'watch-reload') return (await import('./watch-reload-command.js')).watchReloadCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'fleet') return (await import('./fleet-command.js')).fleetCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'functions') return (await import('./functions-command.js')).functionsCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'cold-start') return (await import('./cold-start-command.js')).coldStartCommand({ ...io, argv: io.argv.slice(1) });
    if (sub === 'profile-summary') return profileSummaryCommand({ ...io, argv: io.argv.slice(1) });
    const { allScenarios } = await import('./bench-runner.js');
    const { ensureBroker, ensurePython } = await import('./environment-setup.js');
    const { ProgressReporter } = await import('./progress.js');
    const { runBench } = await import('./run-bench.js');
    const { values } = parse(
      io.argv,
      {
        transport: { type: 'string', short: 'T' },
        'agent-transport': { type: 'string' },
        'pulsar-url': { type: 'string' },
        'admin-url': { type: 'string' },
        targets: { type: 'string' },
        baseline: { type: 'string' },
        'baseline-env': { type: 'string', multiple: true },
        scenarios: { type: 'string' },
        concurrency: { type: 'string', short: 'c' },
        rounds: { type: 'string' },
        together: { type: 'boolean' },
        requests: { type: 'string', short: 'n' },
        duration: { type: 'string', short: 'd' },
        warmup: { type: 'string' },
        payload: { type: 'string' },
        chunks: { type: 'string' },
        long: { type: 'string' },
        'one-call': { type: 'string' },
        'long-warmup': { type: 'string' },
        'request-topics': { type: 'string' },
        'response-topics': { type: 'string' },
        'answer-timeout': { type: 'string' },
        'worker-log-level': { type: 'string' },
        'cpu-prof': { type: 'boolean' },
        perf: { type: 'boolean' },
        out: { type: 'string' },
        quick: { type: 'boolean' },
      },
      false,
    );
    if (values.help) {
      io.stdout.write(HELP);
      return 0;
    }
    const quick = values.quick === true;
    const transport = (values.transport ?? (quick ? 'memory' : BENCH_DEFAULTS.transport)) as BenchTransportKind;
    if (!['pulsar-ws', 'pulsar', 'memory'].includes(transport)) throw new UsageError('--transport must be pulsar-ws, pulsar or memory');
    const persistence = values['request-topics'] ?? BENCH_DEFAULTS.requestPersistence;
    if (persistence !== 'persistent' && persistence !== 'non-persistent') throw new UsageError('--request-topics must be persistent or non-persistent');
    const responsePersistence = values['response-topics'] ?? BENCH_DEFAULTS.responsePersistence;
    if (responsePersistence !== 'persistent' && responsePersistence !== 'non-persistent')
      throw new UsageError('--response-topics must be persistent or non-persistent');
    const targetNames = (values.targets ?? (transport === 'memory' ? 'floor,toolwire' : 'floor,toolwire,python')).split(',').map((t) => t.trim());
    for (const t of targetNames)
      if (!Object.values(TargetName).includes(t as TargetName)) throw new UsageError(`unknown target "${t}" (${Object.values(TargetName).join(', ')})`);
    const agentTransport = values['agent-transport'];
    if (agentTransport !== undefined && (transport === 'memory' || (agentTransport !== 'pulsar-ws' && agentTransport !== 'pulsar'))) {
      throw new UsageError('--agent-transport must be pulsar-ws or pulsar, in a run on a broker');
    }
    const baselineDir = values.baseline === undefined ? undefined : resolve(values.baseline);
    if (baselineDir !== undefined) {
      if (transport === 'memory') throw new UsageError('--baseline runs the other build as its own process: it needs a broker');
      for (const f of ['bin/toolwire.js', 'dist/cli/main.js']) {
        if (!existsSync(join(baselineDir, f)))
          throw new UsageError(`--baseline ${values.baseline}: no ${f} there (a toolwire checkout, built with npm run build)`);
      }
      if (!targetNames.includes('baseline')) targetNames.splice(targetNames.indexOf('toolwire') + 1, 0, 'baseline');
    } else if (targetNames.includes('baseline')) {
      throw new UsageError('the baseline target needs --baseline DIR');
    }
    const baselineEnv = parseEnvPairs(values['baseline-env'] ?? []);
    if (Object.keys(baselineEnv).length > 0 && baselineDir === undefined) throw new UsageError('--baseline-env needs --baseline DIR');
    for (const t of ['python', 'ws-floor', 'functions']) {
      if (transport === 'memory' && targetNames.includes(t))
        throw new UsageError(`target ${t} needs a broker: drop it from --targets or use --transport pulsar-ws`);
    }

    const log = createLogger({ level: io.env['LOG_LEVEL'] ?? 'warn' });
    const progress = new ProgressReporter(io.stderr, Boolean((io.stderr as { isTTY?: boolean }).isTTY));
    const broker =
      transport === 'memory'
        ? undefined
        : {
            pulsarUrl: values['pulsar-url'] ?? io.env['PULSAR_URL'] ?? 'pulsar://127.0.0.1:6650',
            adminUrl: values['admin-url'] ?? io.env['PULSAR_ADMIN_URL'] ?? 'http://127.0.0.1:8080',
            ...(io.env['PULSAR_TOKEN'] ? { token: io.env['PULSAR_TOKEN'] } : {}),
          };
    const echo = (s: string) => io.stderr.write(s);
    if (broker) await ensureBroker(broker, io.env, log, io.signal, echo);
    const python = targetNames.includes('python') ? await ensurePython(io.env, io.signal, echo) : undefined;

    const requests = num(values.requests, '--requests', 1);
    const options: BenchOptions = {
      transport,
      agentTransport,
      broker,
      targets: targetNames as TargetName[],
      concurrency: num(values.concurrency, '--concurrency', 1) ?? BENCH_DEFAULTS.concurrency,
      rounds: Math.trunc(num(values.rounds, '--rounds', 1) ?? BENCH_DEFAULTS.rounds),
      together: values.together === true,
      requests,
      durationMs: (num(values.duration, '--duration', 1) ?? (quick ? 3 : BENCH_DEFAULTS.durationMs / 1000)) * 1000,
      warmupMs: (num(values.warmup, '--warmup', 0) ?? (quick ? 1 : BENCH_DEFAULTS.warmupMs / 1000)) * 1000,
      longWarmupMs: (num(values['long-warmup'], '--long-warmup', 0) ?? BENCH_DEFAULTS.longWarmupMs / 1000) * 1000,
      argumentBytes: num(values.payload, '--payload', 16) ?? BENCH_DEFAULTS.argumentBytes,
      streamChunks: num(values.chunks, '--chunks', 0) ?? BENCH_DEFAULTS.streamChunks,
      oneCallMs: (num(values['one-call'], '--one-call', 0) ?? (quick ? 2 : BENCH_DEFAULTS.oneCallMs / 1000)) * 1000,
      longRequests: num(values.long, '--long', 0) ?? (quick ? 0 : BENCH_DEFAULTS.longRequests),
      requestPersistence: persistence,
      responsePersistence,
      sampleIntervalMs: BENCH_DEFAULTS.sampleIntervalMs,
      answerTimeoutMs: (num(values['answer-timeout'], '--answer-timeout', 0.1) ?? BENCH_DEFAULTS.answerTimeoutMs / 1000) * 1000,
      workerLogLevel: values['worker-log-level'] ?? BENCH_DEFAULTS.workerLogLevel,
      cpuProf: values['cpu-prof'] === true,
      perf: values.perf === true,
      outDir: values.out ?? BENCH_DEFAULTS.outDir,
      python,
      baselineDir,
      baselineEnv,
    };
    const only = values.scenarios?.split(',').map((s) => s.trim());
    if (only) {
      const known = allScenarios(options).map((s) => s.id);
      for (const id of only) if (!known.includes(id)) throw new UsageError(`unknown scenario "${id}" (this run has: ${known.join(', ')})`);
    }
    const command = `npm run bench -- ${io.argv.join(' ')}`.trim();
    const { report, files } = await runBench(options, command, { log, progress, signal: io.signal, ...(only ? { only } : {}) });
    io.stdout.write(`\n${files.markdown}\n${files.json}\n${files.chart}\n\n`);
    for (const c of report.checks) io.stdout.write(`${c.met === undefined ? ' n/a' : c.met ? '  ok' : 'MISS'}  ${c.goal}: ${c.measured}\n`);
    const failed = report.scenarios.filter((s) => s.error !== undefined);
    return failed.length > 0 ? 1 : 0;
  },
};
