import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { DirectoryConfigStore } from '../src/config/directory-store.js';
import type { ConfigItem } from '../src/config/config-store.js';
import type { Transport } from '../src/transport/transport.js';
import { AnswerProbe } from './answer-probe.js';
import type { ManagedChild } from './child-process.js';
import { processTree } from './resource-sampler.js';
import { ECHO_ARGUMENTS, writeServiceConfig } from './service-config.js';
import { functionSubscribed, startEchoFunction, stopEchoFunction } from './targets/functions-target.js';
import type { TargetTopics } from './targets/target.js';
import type { BrokerEndpoints } from './transport-for.js';
import { startWorkerProcess, workerLauncher } from './worker-process.js';

/** What serving one more tool took, each time. */
export interface ToolStartFigures {
  readonly target: 'toolwire' | 'functions';
  /** How one more tool is started there, for the report. */
  readonly how: string;
  /** From the action (descriptor written, localrun spawned) to the first answer on the new tool's topic. */
  readonly startMs: readonly number[];
  /** The resident memory the new tool added: the worker's growth, or the new process's own RSS. */
  readonly rssAddedBytes: readonly number[];
}

export interface ToolStartOptions {
  readonly broker: BrokerEndpoints;
  /** The agents' transport (the probe's). */
  readonly transport: Transport;
  /** Tools added, one after the other. */
  readonly tools: number;
  /** Fresh topics for the n-th service of this measurement (0: the one already serving). */
  readonly topics: (n: number) => TargetTopics;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

const ANSWER_TIMEOUT_MS = 120_000;

/** The resident memory of a process and everything it started. */
export async function rssBytes(pid: number): Promise<number> {
  const statuses = await Promise.all((await processTree(pid)).map((p) => readFile(`/proc/${p}/status`, 'utf8')));
  return statuses.reduce((sum, status) => sum + Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? Number.NaN) * 1024, 0);
}

/** The time from `act` to the first answer on `topics`, the probe opened before the clock starts. */
async function timeToAnswer(o: ToolStartOptions, topics: TargetTopics, act: () => Promise<void>): Promise<number> {
  const probe = await AnswerProbe.open(o.transport, topics.requestTopic, topics.responseTopic, o.signal);
  try {
    const started = performance.now();
    await act();
    return (await probe.answered(ANSWER_TIMEOUT_MS, o.signal)) - started;
  } finally {
    await probe.close();
  }
}

function echoServiceItems(topics: TargetTopics): ConfigItem[] {
  const service = {
    id: topics.serviceId,
    'request-queue': topics.requestTopic,
    'response-queue': topics.responseTopic,
    plugin: { kind: 'module', module: 'builtin:echo' },
  };
  const tool = {
    type: 'tool-service',
    name: `${topics.serviceId}-echo`,
    description: `${topics.serviceId}-echo (written by the benchmark)`,
    service: topics.serviceId,
    arguments: ECHO_ARGUMENTS,
  };
  return [
    { type: 'tool-service', key: topics.serviceId, value: JSON.stringify(service) },
    { type: 'tool', key: tool.name, value: JSON.stringify(tool) },
  ];
}

/**
 * toolwire: a running worker (`toolwire run`, one echo service, serving) is given one more
 * service and its tool as descriptors in its config directory, as an operator adds one; timed
 * from the files written to the new tool's first answer.
 */
export async function toolwireToolStart(o: ToolStartOptions): Promise<ToolStartFigures> {
  const first = o.topics(0);
  const config = await writeServiceConfig([
    {
      id: first.serviceId,
      requestQueue: first.requestTopic,
      responseQueue: first.responseTopic,
      module: 'builtin:echo',
      concurrency: 64,
      tools: [{ name: `${first.serviceId}-echo`, arguments: ECHO_ARGUMENTS }],
    },
  ]);
  let worker: ManagedChild | undefined;
  try {
    const kind = o.transport.kind === 'pulsar' ? 'pulsar' : 'pulsar-ws';
    worker = await startWorkerProcess(
      {
        launcher: workerLauncher(kind),
        configDir: config.dir,
        broker: o.broker,
        transport: kind,
        logLevel: 'info',
        probe: false,
        label: 'toolwire worker (tool start)',
      },
      o.signal,
    );
    const pid = worker.pid!;
    await timeToAnswer(o, first, () => Promise.resolve());
    const store = new DirectoryConfigStore(config.dir);
    const startMs: number[] = [];
    const rssAddedBytes: number[] = [];
    for (let n = 1; n <= o.tools; n++) {
      const topics = o.topics(n);
      const before = await rssBytes(pid);
      startMs.push(await timeToAnswer(o, topics, () => store.put(echoServiceItems(topics))));
      rssAddedBytes.push((await rssBytes(pid)) - before);
    }
    return { target: 'toolwire', how: `one more service and tool written to a running worker's config directory (${kind})`, startMs, rssAddedBytes };
  } finally {
    await worker?.stop();
    await config.remove();
  }
}

/**
 * Pulsar Functions: with one echo function serving, one more is started as a user without a
 * functions worker starts one, `pulsar-admin functions localrun`; timed from the spawn to its
 * first answer. Each function is a process tree of its own (pulsar-admin's JVM and the runner
 * JVM it starts): its whole RSS is what it added.
 */
export async function functionsToolStart(o: ToolStartOptions): Promise<ToolStartFigures> {
  const running: ManagedChild[] = [];
  try {
    const first = o.topics(0);
    const base = await startEchoFunction({ name: first.serviceId, ...first }, o.broker, o.signal);
    running.push(base);
    await functionSubscribed(base, o.signal);
    await timeToAnswer(o, first, () => Promise.resolve());
    const startMs: number[] = [];
    const rssAddedBytes: number[] = [];
    for (let n = 1; n <= o.tools; n++) {
      const topics = o.topics(n);
      startMs.push(
        await timeToAnswer(o, topics, async () => {
          running.push(await startEchoFunction({ name: topics.serviceId, ...topics }, o.broker, o.signal));
        }),
      );
      rssAddedBytes.push(await rssBytes(running.at(-1)!.pid!));
    }
    return { target: 'functions', how: 'one more function started with pulsar-admin functions localrun (its JVMs)', startMs, rssAddedBytes };
  } finally {
    await Promise.all(running.map(stopEchoFunction));
  }
}
