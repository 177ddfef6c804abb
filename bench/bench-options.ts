import type { TargetName } from './targets/target.js';
import type { BenchTransportKind, BrokerEndpoints } from './transport-for.js';

export interface BenchOptions {
  readonly transport: BenchTransportKind;
  /**
   * The agents' transport when not the run's (--agent-transport): native workers under
   * WebSocket agents, say, to tell the worker's share of a tail from the load generator's.
   */
  readonly agentTransport?: 'pulsar-ws' | 'pulsar' | undefined;
  /** Undefined for the memory transport. */
  readonly broker: BrokerEndpoints | undefined;
  readonly targets: readonly TargetName[];
  /** Requests in flight (K). */
  readonly concurrency: number;
  /**
   * Rounds of the targets, in an order that changes each round (roundOrder): the ratios are
   * the medians over rounds, so a neighbour's burst on a shared machine moves one round, not
   * the figure.
   */
  readonly rounds: number;
  /** Each scenario is bounded by a request count, or else by a duration. */
  readonly requests: number | undefined;
  readonly durationMs: number;
  readonly warmupMs: number;
  /**
   * Warm-up of the long RSS run: long enough for V8 to grow its heap to its working size, so
   * the run measures drift (a leak), not start-up growth. The series keeps the warm-up too.
   */
  readonly longWarmupMs: number;
  readonly argumentBytes: number;
  /** Chunks per answer in the stream scenarios (0: no stream scenarios). */
  readonly streamChunks: number;
  /**
   * Length of each one-call scenario (floor and toolwire with one request in flight, on
   * persistent and non-persistent request topics): the latency an agent that waits for each
   * answer sees. 0: skip them.
   */
  readonly oneCallMs: number;
  /** Requests of the long RSS run of toolwire (0: skip it). */
  readonly longRequests: number;
  /** Request topics: persistent (as the echo-service example) or non-persistent (TrustGraph's default). */
  readonly requestPersistence: 'persistent' | 'non-persistent';
  /**
   * Response topics: non-persistent (TrustGraph's) or persistent. Under CPU starvation the
   * broker drops some non-persistent messages, and each drop idles an agent for the answer
   * timeout; persistent responses take that noise out of a worker-to-worker comparison.
   */
  readonly responsePersistence: 'persistent' | 'non-persistent';
  readonly sampleIntervalMs: number;
  readonly answerTimeoutMs: number;
  readonly workerLogLevel: string;
  /** Write V8 CPU profiles of the Node targets under the run's directory. */
  readonly cpuProf: boolean;
  /** Record on-CPU profiles of the Node targets with Linux perf over each measured window (perf-profile.ts). */
  readonly perf?: boolean;
  readonly outDir: string;
  /** Python interpreter with trustgraph-base (scripts/python-env.sh), when the peer runs. */
  readonly python: string | undefined;
  /** A built toolwire checkout the `baseline` target runs (--baseline). */
  readonly baselineDir: string | undefined;
  /**
   * Each round's targets run at the same time (--together), each on its own topics with its
   * own agents, rather than one after the other. The machine's speed, which moves by half
   * between rounds and within them on a shared VM, is then the same for all of them, so
   * their CPU a request and the share of the machine each wins compare like for like. What
   * each serves is that share, not what it serves alone.
   */
  readonly together?: boolean;
  /** The baseline process's own environment on top of the run's (--baseline-env): a setting measured side by side. */
  readonly baselineEnv?: Readonly<Record<string, string>>;
}

export const BENCH_DEFAULTS = {
  transport: 'pulsar-ws',
  concurrency: 64,
  rounds: 1,
  durationMs: 20_000,
  warmupMs: 3_000,
  longWarmupMs: 20_000,
  argumentBytes: 1024,
  streamChunks: 100,
  oneCallMs: 10_000,
  longRequests: 200_000,
  requestPersistence: 'persistent',
  responsePersistence: 'non-persistent',
  sampleIntervalMs: 1_000,
  // A lost answer holds its agent this long: short enough that a few losses (non-persistent
  // response topics drop under load) do not eat the capacity being measured, long enough
  // for the Python peer (~0.75 s at 64 in flight).
  answerTimeoutMs: 3_000,
  workerLogLevel: 'info',
  outDir: 'bench/results',
} as const;
