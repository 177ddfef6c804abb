import type { Logger } from 'pino';
import type { Transport } from '../../src/transport/transport.js';
import type { ManagedChild } from '../child-process.js';
import { ProbeSampler, SelfSampler, type ResourceSampler } from '../resource-sampler.js';
import type { BenchTransportKind, BrokerEndpoints } from '../transport-for.js';

export const TargetName = {
  Floor: 'floor',
  Toolwire: 'toolwire',
  Baseline: 'baseline',
  WsFloor: 'ws-floor',
  Python: 'python',
  Functions: 'functions',
} as const;
export type TargetName = (typeof TargetName)[keyof typeof TargetName];

/** Fresh topics for one target in one run. */
export interface TargetTopics {
  readonly serviceId: string;
  readonly requestTopic: string;
  readonly responseTopic: string;
  /** TrustGraph's convention: `<service id>-request`. */
  readonly subscription: string;
}

export interface TargetContext {
  readonly transport: BenchTransportKind;
  readonly broker: BrokerEndpoints | undefined;
  /** Memory transport only: the in-process broker the load generator also uses. */
  readonly shared: Transport | undefined;
  readonly concurrency: number;
  readonly log: Logger;
  readonly sampleIntervalMs: number;
  readonly workerLogLevel: string;
  /** Write a V8 CPU profile of Node targets here. */
  readonly cpuProfDir: string | undefined;
  /** Node targets write `/tmp/perf-PID.map` (--perf-basic-prof), so that perf names their JavaScript. */
  readonly perfMap?: boolean;
  /** The Python interpreter of scripts/python-env.sh. */
  readonly python: string | undefined;
  /** Another toolwire checkout, built, that the `baseline` target runs (--baseline). */
  readonly baselineDir: string | undefined;
  /** The baseline's own environment (--baseline-env). */
  readonly baselineEnv: Readonly<Record<string, string>>;
}

export interface RunningTarget {
  /** What actually served, for the report (command, process, transport). */
  readonly description: string;
  readonly pid: number | undefined;
  readonly sampler: ResourceSampler;
  /** Resolves if the target process dies, with how it ended. */
  readonly exited: Promise<string>;
  output(): string;
  stop(): Promise<void>;
}

/** A target inside the bench's own process (the memory transport): it cannot exit on its own. */
export function inProcessTarget(description: string, ctx: TargetContext, stop: () => Promise<void>): RunningTarget {
  return {
    description,
    pid: process.pid,
    sampler: new SelfSampler(ctx.sampleIntervalMs),
    exited: new Promise<string>(() => undefined),
    output: () => '',
    stop,
  };
}

/** A target in a child process with the resource probe preloaded; `cleanup` runs after it stops. */
export function childTarget(description: string, child: ManagedChild, ctx: TargetContext, cleanup?: () => Promise<void>): RunningTarget {
  return {
    description,
    pid: child.pid,
    sampler: new ProbeSampler(child.process, ctx.sampleIntervalMs),
    exited: child.ended.then(() => child.exitText),
    output: () => child.output(),
    stop: async () => {
      await child.stop();
      await cleanup?.();
    },
  };
}

export interface BenchTarget {
  readonly name: TargetName;
  /** Can it serve this mode at all (the stock Python service never streams)? */
  supports(stream: boolean): boolean;
  start(topics: TargetTopics, ctx: TargetContext, signal?: AbortSignal): Promise<RunningTarget>;
}
