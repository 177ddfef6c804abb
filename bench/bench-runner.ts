import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { errorMessage } from '../src/errors.js';
import { MemoryTransport } from '../src/transport/memory-transport.js';
import type { Transport } from '../src/transport/transport.js';
import type { BenchOptions } from './bench-options.js';
import { runLoad, type LoadResult } from './load-generator.js';
import { machineShare, readCpuTicks, type CpuTicks, type MachineShare } from './machine-cpu.js';
import type { ProgressReporter } from './progress.js';
import { summarizeResources, type ResourceSample, type ResourceSummary } from './resource-sample.js';
import { floorTarget, wsFloorTarget } from './targets/floor-target.js';
import { functionsTarget } from './targets/functions-target.js';
import { pythonTarget } from './targets/python-target.js';
import type { BenchTarget, TargetName, TargetTopics } from './targets/target.js';
import { baselineTarget, toolwireTarget } from './targets/toolwire-target.js';
import { adminOf, transportFor } from './transport-for.js';
import { scenarioDrops, type BrokerDrops } from './broker-drops.js';
import { singleId } from './scenario-id.js';
import { PerfRecording, removePerfFiles, summarizeRecording, type PerfSummary } from './perf-profile.js';

const TARGETS: Readonly<Record<TargetName, BenchTarget>> = {
  floor: floorTarget,
  toolwire: toolwireTarget,
  baseline: baselineTarget,
  'ws-floor': wsFloorTarget,
  python: pythonTarget,
  functions: functionsTarget,
};

/** One measured run of one target in one mode. */
export interface Scenario {
  readonly id: string;
  readonly target: TargetName;
  readonly stream: boolean;
  /** Chunks the echo yields (0: one plain answer). */
  readonly chunks: number;
  readonly requests: number | undefined;
  readonly durationMs: number | undefined;
  /** Unrecorded load first; the run's warm-up when absent. */
  readonly warmupMs?: number;
  /** Why it exists, for the report. */
  readonly purpose: string;
  /** Requests in flight when not the run's concurrency (the one-call scenarios: 1). */
  readonly concurrency?: number;
  /** Request topic kind when not the run's (the one-call scenarios measure both). */
  readonly requestPersistence?: BenchOptions['requestPersistence'];
}

/** The two request topic kinds, the run's own first. */
function topicKinds(o: Pick<BenchOptions, 'requestPersistence' | 'transport'>): BenchOptions['requestPersistence'][] {
  // The memory transport has no topic kinds: one pair is enough there.
  if (o.transport === 'memory') return [o.requestPersistence];
  return o.requestPersistence === 'persistent' ? ['persistent', 'non-persistent'] : ['non-persistent', 'persistent'];
}

/** The id of a one-call scenario: `floor-c1-persistent`, `toolwire-c1-non-persistent`... */
export function oneCallId(target: 'floor' | 'toolwire', kind: BenchOptions['requestPersistence']): string {
  return `${target}-c1-${kind}`;
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly description: string;
  readonly topics: TargetTopics;
  readonly load: LoadResult | undefined;
  readonly resources: ResourceSummary | undefined;
  readonly series: readonly ResourceSample[];
  /** The whole machine during the measured phase: busy and stolen shares of its CPU time. */
  readonly machine?: MachineShare | undefined;
  /** Over the whole scenario, warm-up included: what the broker dropped on non-persistent topics. */
  readonly drops?: BrokerDrops | undefined;
  /** The target's on-CPU profile over the measured phase (--perf). */
  readonly perf?: PerfSummary | undefined;
  readonly error: string | undefined;
}

/**
 * The targets' order in round `round` (from 1): rotated by one place every two rounds, and
 * reversed in every second, so that neither side always runs on a broker the other just
 * warmed, and with three targets none always runs between the other two (two runs of the
 * same code, in the middle and then last, came out 6% apart). Three targets take all six
 * orders in six rounds; two alternate.
 */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  const n = targets.length;
  const shift = n === 0 ? 0 : Math.floor((round - 1) / 2) % n;
  const rotated = [...targets.slice(shift), ...targets.slice(0, shift)];
  return round % 2 === 0 ? rotated.reverse() : rotated;
}

/**
 * Every scenario a run can measure, in order: the three-way single comparison first. The
 * floor's stream (one message per chunk, the plain way) is there to show what that costs;
 * it is measured only when asked for by name (--scenarios), see planScenarios.
 */
export function allScenarios(o: BenchOptions): Scenario[] {
  const bound = { requests: o.requests, durationMs: o.requests === undefined ? o.durationMs : undefined };
  const single = (t: TargetName, round: number): Scenario => ({
    id: singleId(t, round),
    target: t,
    stream: false,
    chunks: 0,
    ...bound,
    purpose: round === 1 ? 'single answer, three-way comparison' : `single answer, round ${round}`,
  });
  const out: Scenario[] = o.targets.map((t) => single(t, 1));
  // The Python peer runs once: it is an order of magnitude away, and slow to measure.
  const pair = o.targets.filter((t) => t !== 'python');
  for (let round = 2; round <= o.rounds; round++) for (const t of roundOrder(pair, round)) out.push(single(t, round));
  const onePair = o.targets.filter((t): t is 'floor' | 'toolwire' => t === 'floor' || t === 'toolwire');
  if (o.oneCallMs > 0) {
    for (const [i, kind] of topicKinds(o).entries()) {
      for (const t of i % 2 === 0 ? onePair : [...onePair].reverse()) {
        out.push({
          id: oneCallId(t, kind),
          target: t,
          stream: false,
          chunks: 0,
          requests: undefined,
          durationMs: o.oneCallMs,
          concurrency: 1,
          requestPersistence: kind,
          purpose: `one call in flight, ${kind} request topic`,
        });
      }
    }
  }
  if (o.streamChunks > 0) {
    for (const t of o.targets.filter((x) => TARGETS[x].supports(true))) {
      const purpose =
        t === 'floor'
          ? `one message per chunk, ${o.streamChunks} chunks (the plain way to stream)`
          : `streamed answer of ${o.streamChunks} chunks (same observation size)`;
      out.push({ id: `${t}-stream`, target: t, stream: true, chunks: o.streamChunks, ...bound, purpose });
    }
  }
  if (o.longRequests > 0 && o.targets.includes('toolwire')) {
    out.push({
      id: 'toolwire-long',
      target: 'toolwire',
      stream: false,
      chunks: 0,
      requests: o.longRequests,
      durationMs: undefined,
      warmupMs: o.longWarmupMs,
      purpose: `RSS over ${o.longRequests} requests, after ${o.longWarmupMs / 1000} s of warm-up`,
    });
  }
  return out;
}

/** What a run measures by default: everything but the floor's stream. */
export function planScenarios(o: BenchOptions): Scenario[] {
  return allScenarios(o).filter((s) => s.id !== 'floor-stream');
}

/** Unrecorded load before a run's first scenario, at the least. */
export const BROKER_WARMUP_MS = 15_000;

/**
 * A broker that has just started spends its first seconds on cold JIT (a round on it ran at
 * half the speed of later ones): the first scenario of a run warms it up for all of them.
 */
export function warmBrokerFirst(scenarios: readonly Scenario[], o: Pick<BenchOptions, 'transport' | 'warmupMs'>): Scenario[] {
  const [first, ...rest] = scenarios;
  if (first === undefined || o.transport === 'memory') return [...scenarios];
  return [{ ...first, warmupMs: Math.max(first.warmupMs ?? o.warmupMs, BROKER_WARMUP_MS) }, ...rest];
}

/** The round a single-answer scenario belongs to (`toolwire-single-r3`: 3), or undefined for any other. */
function singleRound(s: Scenario): number | undefined {
  const m = /^[a-z-]+?-single(?:-r(\d+))?$/.exec(s.id);
  return m ? Number(m[1] ?? 1) : undefined;
}

/**
 * The scenarios in the batches they run in: one at a time, or with `together` the
 * single-answer scenarios of each round at once (the Python peer still alone), each batch's
 * members with the longest warm-up among them, so that they measure over the same seconds.
 */
export function scenarioBatches(scenarios: readonly Scenario[], together: boolean): Scenario[][] {
  if (!together) return scenarios.map((s) => [s]);
  const batches: Scenario[][] = [];
  let round: number | undefined;
  for (const s of scenarios) {
    const r = s.target === 'python' ? undefined : singleRound(s);
    const last = batches.at(-1);
    if (r !== undefined && r === round && last) last.push(s);
    else batches.push([s]);
    round = r;
  }
  return batches.map((batch) => {
    if (batch.length === 1) return batch;
    const warmupMs = Math.max(...batch.map((s) => s.warmupMs ?? 0));
    return warmupMs > 0 ? batch.map((s) => ({ ...s, warmupMs })) : batch;
  });
}

export interface RunDeps {
  readonly log: Logger;
  readonly progress: ProgressReporter;
  readonly signal: AbortSignal;
  /** Where V8 profiles go when o.cpuProf. */
  readonly profileDir: string | undefined;
  /**
   * Resolves when the load may start (the other runs of a batch are ready too, see
   * startTogether). Called once the target and the agents are up, and again, to let the
   * others go, if the scenario fails before that.
   */
  readonly startLoad?: () => Promise<void>;
}

export function newRunId(): string {
  return `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
}

export function topicsFor(runId: string, scenario: string, o: Pick<BenchOptions, 'requestPersistence' | 'responsePersistence'>): TargetTopics {
  const serviceId = `bench-${runId}-${scenario}`;
  const ns = o.requestPersistence === 'persistent' ? 'flow' : 'request';
  return {
    serviceId,
    requestTopic: `${o.requestPersistence}://tg/${ns}/${serviceId}-request`,
    responseTopic: `${o.responsePersistence}://tg/response/${serviceId}`,
    subscription: `${serviceId}-request`,
  };
}

/** Run one scenario on fresh topics: start the target, load it, stop it, clean up. */
export async function runScenario(o: BenchOptions, runId: string, s: Scenario, deps: RunDeps): Promise<ScenarioResult> {
  const topics = topicsFor(runId, s.id, { ...o, requestPersistence: s.requestPersistence ?? o.requestPersistence });
  const { log, progress, signal } = deps;
  // The WebSocket floor's agents speak WebSocket too, whatever the run's transport.
  const transport = s.target === 'ws-floor' ? 'pulsar-ws' : o.transport;
  const agentKind = s.target === 'ws-floor' ? transport : (o.agentTransport ?? transport);
  const shared = transport === 'memory' ? new MemoryTransport() : undefined;
  let agentTransport: Transport | undefined = shared;
  let description: string = s.target;
  let load: LoadResult | undefined;
  let series: ResourceSample[] = [];
  let error: string | undefined;
  let measureTicks: CpuTicks | undefined;
  let machine: MachineShare | undefined;
  let drops: BrokerDrops | undefined;
  let recording: PerfRecording | undefined;
  let perf: PerfSummary | undefined;
  progress.note(`${s.id}: starting (${s.purpose})`);
  try {
    const target = await TARGETS[s.target].start(
      topics,
      {
        transport,
        broker: o.broker,
        shared,
        concurrency: o.concurrency,
        log,
        sampleIntervalMs: o.sampleIntervalMs,
        workerLogLevel: o.workerLogLevel,
        cpuProfDir: deps.profileDir,
        perfMap: o.perf === true,
        python: o.python,
        baselineDir: o.baselineDir,
        baselineEnv: o.baselineEnv ?? {},
      },
      signal,
    );
    description = target.description;
    try {
      agentTransport ??= await transportFor(agentKind, o.broker, log.child({ component: 'bench-agents' }));
      const died = target.exited.then((how) => {
        throw new Error(`${s.target} exited (${how}) during the run:\n${target.output().slice(-1500)}`);
      });
      if (deps.startLoad) await Promise.race([deps.startLoad(), died]);
      load = await Promise.race([
        runLoad({
          transport: agentTransport,
          requestTopic: topics.requestTopic,
          responseTopic: topics.responseTopic,
          concurrency: s.concurrency ?? o.concurrency,
          ...(s.requests !== undefined ? { requests: s.requests } : {}),
          ...(s.durationMs !== undefined ? { durationMs: s.durationMs } : {}),
          warmupMs: s.warmupMs ?? o.warmupMs,
          shape: { argumentBytes: o.argumentBytes, chunks: s.chunks },
          stream: s.stream,
          answerTimeoutMs: o.answerTimeoutMs,
          readyTimeoutMs: 120_000,
          log,
          signal,
          onProgress: (p) => {
            if (p.phase === 'measure') {
              measureTicks ??= readCpuTicks();
              // Over the measured window only: the answers it is divided by are that window's.
              if (o.perf && target.pid !== undefined && target.pid !== process.pid) recording ??= PerfRecording.start(target.pid, perfFile(o, runId, s));
            }
            progress.update(s.id, p);
          },
          // Read while both topics still have their subscriptions.
          settled: async () => {
            if (o.broker && o.transport !== 'memory') drops = await scenarioDrops(adminOf(o.broker), topics);
          },
        }),
        died,
      ]);
      died.catch(() => undefined);
      machine = machineShare(measureTicks, readCpuTicks());
      // A target in the bench's own process is counted with its agents: neither part can be told.
      if (machine && target.pid === process.pid) machine = { busyPct: machine.busyPct, stealPct: machine.stealPct };
      if (recording) {
        await recording.stop();
        perf = await summarizeRecording(recording.file, target.pid!);
      }
    } finally {
      progress.clear();
      // A run that failed leaves no recording running (stop() is idempotent once perf is gone).
      await recording?.stop().catch((err: unknown) => log.warn({ err }, 'perf record did not end cleanly'));
      target.sampler.stop();
      if (load) series = target.sampler.series(load.startedAtMs);
      await target.stop().catch((err: unknown) => log.warn({ err }, 'target did not stop cleanly'));
      if (o.perf) await removePerfFiles(perfFile(o, runId, s), target.pid);
    }
  } catch (err) {
    error = errorMessage(err);
    log.error({ err, scenario: s.id }, 'scenario failed');
  } finally {
    // A scenario that failed before its load must not hold up the rest of its batch.
    void deps.startLoad?.();
    await agentTransport?.close().catch(() => undefined);
    if (o.broker && o.transport !== 'memory') {
      // Best effort: a shared broker should not keep every run's topics.
      for (const t of [topics.requestTopic, topics.responseTopic])
        await adminOf(o.broker)
          .deleteTopic(t)
          .catch(() => undefined);
    }
  }
  const resources = load ? summarizeResources(series, load.answered) : undefined;
  if (load) {
    progress.note(
      `${s.id}: ${Math.round(load.throughputPerSec)} req/s, p50 ${load.latency.p50Ms.toFixed(2)} ms, p99 ${load.latency.p99Ms.toFixed(2)} ms, p99.9 ${load.latency.p999Ms.toFixed(2)} ms` +
        `${load.errors + load.timeouts + load.wrongAnswers > 0 ? `, ${load.errors} errors, ${load.timeouts} timeouts, ${load.wrongAnswers} wrong` : ''}`,
    );
  } else {
    progress.note(`${s.id}: FAILED: ${error ?? 'unknown'}`);
  }
  return { scenario: s, description, topics, load, resources, series, machine, drops, perf, error };
}

function perfFile(o: BenchOptions, runId: string, s: Scenario): string {
  return join(o.outDir, `${runId}-${s.id}.perf.data`);
}
