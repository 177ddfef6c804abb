import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse, UsageError } from '../src/cli/args.js';
import type { CommandIo } from '../src/cli/command.js';
import { errorMessage } from '../src/errors.js';
import { createLogger } from '../src/logging.js';
import { BENCH_DEFAULTS } from './bench-options.js';
import { newRunId } from './bench-runner.js';
import type { ColdStartFigures, ColdStartTarget } from './cold-start.js';
import type { ModuleCost } from './startup-modules.js';

export const COLD_START_HELP = `Usage: npm run bench -- cold-start [--services LIST] [--transports LIST] [--rounds N] [--modules-only] [--cpu-prof DIR] [--out DIR]

What a worker that scales on backlog (KEDA's Pulsar scaler, scale to zero) pays on every
scale-up, toolwire beside the floor, on a broker of its own (scripts/pulsar-broker.sh):
  1. a process spawned with S echo services (each its own request topic) until an agent's
     request is answered on the first service and on the last; its RSS and V8 heap in use a
     second later (its own probe, no collection forced). Rounds alternate the two targets.
  2. what loads at start: each module the worker loads at start, and the worker's and the
     floor's code, imported alone in a fresh Node; heap after a full collection, RSS, time.
A transport whose client does not load here (the native pulsar-client) is reported and left out.

  --services LIST    services per process (default 1,100,1000)
  --transports LIST  pulsar-ws,pulsar (default both)
  --rounds N         starts of each target at each size (default 3; the report gives medians)
  --modules-only     only part 2 (no broker)
  --cpu-prof DIR     a V8 CPU profile of every started process (read with 'profile-summary')
  --out DIR          results directory (default ${BENCH_DEFAULTS.outDir})
`;

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/** Medians of the rounds, one row per transport, size and target. */
export function coldStartTable(figures: readonly ColdStartFigures[]): string {
  const keys = [...new Set(figures.map((f) => `${f.transport}|${f.services}|${f.target}`))];
  const rows = keys.map((key) => {
    const mine = figures.filter((f) => `${f.transport}|${f.services}|${f.target}` === key);
    const f = mine[0]!;
    const ms = (k: 'firstAnswerMs' | 'allServingMs') => `${Math.round(median(mine.map((m) => m[k])))} ms`;
    return `| ${f.transport} | ${f.services} | ${f.target} | ${ms('firstAnswerMs')} | ${ms('allServingMs')} | ${mb(median(mine.map((m) => m.rssBytes)))} | ${mb(median(mine.map((m) => m.heapUsedBytes)))} | ${mine.length} |`;
  });
  return [
    '| transport | services | target | spawn to first answer | to every service answering | RSS after | heap used after | starts |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

export function modulesTable(costs: readonly ModuleCost[]): string {
  return [
    '| imported alone | heap (after GC) | RSS | import time |',
    '| --- | ---: | ---: | ---: |',
    ...costs.map((c) => `| \`${c.specifier}\` | ${mb(c.heapBytes)} | ${mb(c.rssBytes)} | ${Math.round(c.importMs)} ms |`),
  ].join('\n');
}

/** `cold-start serve-floors`: the floor answering every topic of a file from this one process (the cold start's floor target). */
async function serveFloors(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, { transport: { type: 'string' }, 'topics-file': { type: 'string' }, 'response-topic': { type: 'string' } });
  const kind = values.transport;
  if (kind !== 'pulsar-ws' && kind !== 'pulsar') throw new UsageError('--transport is pulsar-ws or pulsar');
  if (!values['topics-file'] || !values['response-topic']) throw new UsageError('--topics-file and --response-topic are required');
  const { startFloorResponder } = await import('./floor-responder.js');
  const { transportFor } = await import('./transport-for.js');
  const log = createLogger({ level: io.env['LOG_LEVEL'] ?? 'warn' });
  const pulsarUrl = io.env['PULSAR_URL'];
  const adminUrl = io.env['PULSAR_ADMIN_URL'];
  if (!pulsarUrl || !adminUrl) throw new UsageError('PULSAR_URL and PULSAR_ADMIN_URL are required');
  const transport = await transportFor(kind, { pulsarUrl, adminUrl }, log);
  try {
    const topics = (await readFile(values['topics-file'], 'utf8')).split('\n').filter((t) => t !== '');
    const responseTopic = values['response-topic'];
    const floors = await Promise.all(
      topics.map((requestTopic, n) =>
        startFloorResponder({
          transport,
          requestTopic,
          responseTopic,
          subscription: `floor-${n}`,
          concurrency: BENCH_DEFAULTS.concurrency,
          log,
          signal: io.signal,
        }),
      ),
    );
    await new Promise<void>((done) => {
      if (io.signal.aborted) done();
      else io.signal.addEventListener('abort', () => done(), { once: true });
    });
    await Promise.all(floors.map((f) => f.stop()));
  } finally {
    await transport.close();
  }
  return 0;
}

/** Whether the native client loads in this Node (as the worker loads it); its error when not. */
async function nativeClientError(): Promise<string | undefined> {
  try {
    await (await import('../src/transport/pulsar-native-client.js')).loadPulsarClient();
    return undefined;
  } catch (err) {
    return errorMessage(err);
  }
}

export async function coldStartCommand(io: CommandIo): Promise<number> {
  if (io.argv[0] === 'serve-floors') return serveFloors({ ...io, argv: io.argv.slice(1) });
  const { values } = parse(io.argv, {
    services: { type: 'string' },
    transports: { type: 'string' },
    rounds: { type: 'string' },
    'modules-only': { type: 'boolean' },
    'cpu-prof': { type: 'string' },
    out: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(COLD_START_HELP);
    return 0;
  }
  const sizes = (values.services ?? '1,100,1000').split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new UsageError('--services is a list of whole numbers, e.g. 1,100,1000');
  const transports = (values.transports ?? 'pulsar-ws,pulsar').split(',').map((t) => t.trim());
  for (const t of transports) if (t !== 'pulsar-ws' && t !== 'pulsar') throw new UsageError(`unknown transport "${t}" (pulsar-ws, pulsar)`);
  const rounds = Number(values.rounds ?? '3');
  if (!Number.isInteger(rounds) || rounds < 1) throw new UsageError('--rounds must be a whole number >= 1');
  const outDir = values.out ?? BENCH_DEFAULTS.outDir;
  const cpuProfDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
  const say = (line: string) => io.stderr.write(`${line}\n`);
  const notes: string[] = [];
  const figures: ColdStartFigures[] = [];

  if (values['modules-only'] !== true) {
    const usable: ('pulsar-ws' | 'pulsar')[] = [];
    for (const t of transports as ('pulsar-ws' | 'pulsar')[]) {
      const why = t === 'pulsar' ? await nativeClientError() : undefined;
      if (why === undefined) usable.push(t);
      else notes.push(`- ${t}: not measured, the native client does not load here: ${why}`);
    }
    if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });
    const { OwnBroker } = await import('./own-broker.js');
    const { transportFor } = await import('./transport-for.js');
    const { measureColdStart } = await import('./cold-start.js');
    const log = createLogger({ level: io.env['LOG_LEVEL'] ?? 'warn' });
    say('cold-start: starting a broker of its own...');
    const broker = await OwnBroker.start(io.signal);
    try {
      for (const transport of usable) {
        const agents = await transportFor(transport, broker.endpoints, log);
        try {
          for (const services of sizes) {
            for (let round = 1; round <= rounds; round++) {
              const order: ColdStartTarget[] = round % 2 === 1 ? ['toolwire', 'floor'] : ['floor', 'toolwire'];
              for (const target of order) {
                const prefix = `cold-${newRunId()}-${target}`;
                const f = await measureColdStart(target, transport, services, {
                  broker: broker.endpoints,
                  agents,
                  log,
                  prefix,
                  signal: io.signal,
                  ...(cpuProfDir ? { cpuProfDir } : {}),
                });
                say(
                  `  ${transport} ${services} services ${target}: first answer ${Math.round(f.firstAnswerMs)} ms, all ${Math.round(f.allServingMs)} ms, RSS ${mb(f.rssBytes)}, heap ${mb(f.heapUsedBytes)}`,
                );
                figures.push(f);
              }
            }
          }
        } finally {
          await agents.close();
        }
      }
    } finally {
      await broker.destroy();
    }
  }

  say('cold-start: what loads at start...');
  const { moduleCost, STARTUP_MODULES } = await import('./startup-modules.js');
  const costs: ModuleCost[] = [];
  for (const specifier of STARTUP_MODULES) costs.push(await moduleCost(specifier, 3, io.signal));

  const markdown = [
    `npm run bench -- cold-start ${io.argv.join(' ')} (${new Date().toISOString()})`.replace(/ +\(/, ' ('),
    '',
    ...(figures.length > 0 ? [coldStartTable(figures), ''] : []),
    ...notes,
    ...(notes.length > 0 ? [''] : []),
    modulesTable(costs),
    '',
  ].join('\n');
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'cold-start-latest.md'), markdown);
  await writeFile(join(outDir, 'cold-start-latest.json'), `${JSON.stringify({ starts: figures, modules: costs, notes }, null, 2)}\n`);
  io.stdout.write(`\n${markdown}\n${join(outDir, 'cold-start-latest.md')}\n`);
  return 0;
}
