import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Transport } from '../src/transport/transport.js';
import { AnswerProbe } from './answer-probe.js';
import { BENCH_MAIN, ManagedChild, PROBE_MODULE_URL } from './child-process.js';
import { ProbeSampler } from './resource-sampler.js';
import { ECHO_ARGUMENTS, writeServiceConfig, type WrittenConfig } from './service-config.js';
import { brokerEnv, type BrokerEndpoints } from './transport-for.js';
import { startWorkerProcess, workerLauncher } from './worker-process.js';

export type ColdStartTarget = 'toolwire' | 'floor';

/** One cold start: a process spawned with `services` services to serve, until they answer. */
export interface ColdStartFigures {
  readonly target: ColdStartTarget;
  readonly transport: 'pulsar-ws' | 'pulsar';
  readonly services: number;
  /** From the spawn to the first answer on the first service. */
  readonly firstAnswerMs: number;
  /** From the spawn to the first answer on the last service: every service serving. */
  readonly allServingMs: number;
  /** Read by the process's own probe a second after every service answered, no collection forced. */
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
}

export interface ColdStartOptions {
  readonly broker: BrokerEndpoints;
  /** The probes' transport. */
  readonly agents: Transport;
  readonly log: Logger;
  /** A prefix of this start's topics, unique in the run. */
  readonly prefix: string;
  /** Write a V8 CPU profile of the started process here. */
  readonly cpuProfDir?: string;
  readonly signal?: AbortSignal;
}

const START_TIMEOUT_MS = 300_000;
/** How long after the last service answered the memory is read: the start's own garbage has had a moment. */
const SETTLE_MS = 1_000;

function topicsOf(prefix: string, services: number): { requestTopics: string[]; responseTopic: string } {
  return {
    requestTopics: Array.from({ length: services }, (_, n) => `persistent://tg/flow/${prefix}-${n}-request`),
    responseTopic: `non-persistent://tg/response/${prefix}`,
  };
}

/** `toolwire run` with one echo service a request topic (module plugin, builtin echo), as the main bench starts it. */
async function spawnToolwire(
  transport: 'pulsar-ws' | 'pulsar',
  requestTopics: readonly string[],
  responseTopic: string,
  o: ColdStartOptions,
): Promise<{ child: ManagedChild; config: WrittenConfig }> {
  const config = await writeServiceConfig(
    requestTopics.map((requestQueue, n) => ({
      id: `${o.prefix}-${n}`,
      requestQueue,
      responseQueue: responseTopic,
      module: 'builtin:echo',
      concurrency: 64,
      tools: [{ name: `${o.prefix}-${n}-echo`, arguments: ECHO_ARGUMENTS }],
    })),
  );
  // At warn the worker logs nothing while it starts, and startWorkerProcess returns at the spawn: the clock's zero.
  const child = await startWorkerProcess({
    launcher: workerLauncher(transport),
    configDir: config.dir,
    broker: o.broker,
    transport,
    logLevel: 'warn',
    probe: true,
    ...(o.cpuProfDir ? { cpuProfDir: o.cpuProfDir } : {}),
    label: `toolwire worker (cold start, ${requestTopics.length} services)`,
  });
  return { child, config };
}

/** The floor answering every topic from one process (`cold-start serve-floors`). */
async function spawnFloor(
  transport: 'pulsar-ws' | 'pulsar',
  requestTopics: readonly string[],
  responseTopic: string,
  o: ColdStartOptions,
): Promise<{ child: ManagedChild; config: WrittenConfig }> {
  const config = await writeServiceConfig([]);
  const topicsFile = join(config.dir, 'request-topics.txt');
  await writeFile(topicsFile, requestTopics.join('\n'));
  const child = new ManagedChild({
    command: process.execPath,
    args: [
      ...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []),
      BENCH_MAIN,
      'cold-start',
      'serve-floors',
      '--transport',
      transport,
      '--topics-file',
      topicsFile,
      '--response-topic',
      responseTopic,
    ],
    env: {
      ...process.env,
      ...brokerEnv(o.broker),
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import=${PROBE_MODULE_URL}`.trim(),
    },
    ipc: true,
    label: `floor (cold start, ${requestTopics.length} services)`,
  });
  return { child, config };
}

/**
 * Spawn `target` serving `services` echo services on `transport` and time, from outside as
 * agents see it, its first answer on the first service and on the last; then read its RSS
 * and heap from its own probe.
 */
export async function measureColdStart(
  target: ColdStartTarget,
  transport: 'pulsar-ws' | 'pulsar',
  services: number,
  o: ColdStartOptions,
): Promise<ColdStartFigures> {
  const { requestTopics, responseTopic } = topicsOf(o.prefix, services);
  const probes = await Promise.all(
    [requestTopics[0]!, requestTopics[services - 1]!].map((topic) => AnswerProbe.open(o.agents, topic, responseTopic, o.signal)),
  );
  let spawned: { child: ManagedChild; config: WrittenConfig } | undefined;
  try {
    const started = performance.now();
    spawned = await (target === 'toolwire' ? spawnToolwire : spawnFloor)(transport, requestTopics, responseTopic, o);
    const { child } = spawned;
    const sampler = new ProbeSampler(child.process, 250);
    const died = child.ended.then((code) => {
      throw new Error(`${child.spec.label} exited (${String(code)}) before it answered:\n${child.output().slice(-2000)}`);
    });
    const [first, last] = (await Promise.race([Promise.all(probes.map((p) => p.answered(START_TIMEOUT_MS, o.signal))), died])) as [number, number];
    died.catch(() => undefined);
    const answeredAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    sampler.stop();
    const sample = sampler.series(0).findLast((s) => s.tMs >= answeredAt) ?? sampler.series(0).at(-1);
    if (!sample) throw new Error(`${child.spec.label}: its probe reported nothing`);
    return {
      target,
      transport,
      services,
      firstAnswerMs: first - started,
      allServingMs: last - started,
      rssBytes: sample.rssBytes,
      heapUsedBytes: sample.heapUsedBytes ?? Number.NaN,
    };
  } finally {
    await Promise.all(probes.map((p) => p.close()));
    await spawned?.child.stop(15_000);
    await spawned?.config.remove();
  }
}
