import { join } from 'node:path';
import { ManagedChild } from '../child-process.js';
import { freePort } from '../free-port.js';
import { ECHO_FUNCTION_CLASS, echoFunctionJar, javaHome, PULSAR_HOME } from '../pulsar-function/echo-function-jar.js';
import { processTree, ProcSampler } from '../resource-sampler.js';
import type { BrokerEndpoints } from '../transport-for.js';
import type { BenchTarget, RunningTarget, TargetContext, TargetTopics } from './target.js';

/** One echo function to run with `pulsar-admin functions localrun`. */
export interface EchoFunctionSpec {
  readonly name: string;
  readonly requestTopic: string;
  readonly responseTopic: string;
  readonly subscription: string;
}

/** The line localrun's consumer logs once it is on the request topic. */
const SUBSCRIBED = /Subscribed to topic on/;

/**
 * `pulsar-admin functions localrun` of the echo function: what a Pulsar user runs to serve one
 * function without a functions worker (the bench's standalone broker starts none). The
 * pulsar-admin JVM starts a second one (bin/function-localrunner) that runs the function:
 * the thread runtime (localrun's default), one instance; the function is asynchronous, so the
 * runtime keeps up to its pending-async limit (1000) in flight. Resolves once the process is
 * spawned: callers wait for it to answer, which is what its start costs.
 */
export async function startEchoFunction(spec: EchoFunctionSpec, broker: BrokerEndpoints, signal?: AbortSignal): Promise<ManagedChild> {
  const jar = await echoFunctionJar(signal);
  const [, tenant, namespace] = /^[a-z-]+:\/\/([^/]+)\/([^/]+)\//.exec(spec.requestTopic) ?? [];
  if (!tenant || !namespace) throw new Error(`not a full topic name: ${spec.requestTopic}`);
  return new ManagedChild({
    command: join(PULSAR_HOME, 'bin', 'pulsar-admin'),
    args: [
      'functions',
      'localrun',
      '--jar',
      jar,
      '--classname',
      ECHO_FUNCTION_CLASS,
      '--inputs',
      spec.requestTopic,
      '--tenant',
      tenant,
      '--namespace',
      namespace,
      '--name',
      spec.name,
      '--subs-name',
      spec.subscription,
      '--broker-service-url',
      broker.pulsarUrl,
      '--web-service-url',
      broker.adminUrl,
      '--user-config',
      JSON.stringify({ 'response-topic': spec.responseTopic }),
      // Each localrun serves its metrics on a port of its own: two at once must not collide.
      '--metrics-port-start',
      String(await freePort()),
    ],
    env: { ...process.env, JAVA_HOME: javaHome() },
    ipc: false,
    label: `Pulsar Function ${spec.name} (localrun)`,
  });
}

/**
 * Stop a localrun and the runner JVM it started: stopping pulsar-admin alone leaves the runner
 * serving, a child of init (found so on this machine).
 */
export async function stopEchoFunction(child: ManagedChild): Promise<void> {
  const below = child.pid === undefined ? [] : (await processTree(child.pid)).slice(1);
  await child.stop(15_000);
  for (const pid of below) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone with its parent.
    }
  }
}

/** Resolve once localrun's consumer is subscribed (its log says so); the first answer is still the caller's sign that it serves. */
export async function functionSubscribed(child: ManagedChild, signal?: AbortSignal): Promise<void> {
  await child.waitForLine(SUBSCRIBED, 120_000, signal);
}

/**
 * A Pulsar Function as the target: the echo tool written the way a Pulsar user would write
 * it instead of serving it with toolwire, on the same broker, topics and load. RSS and CPU
 * are read from /proc, for the launcher and the JVM it starts together.
 */
export const functionsTarget: BenchTarget = {
  name: 'functions',
  supports: (stream) => !stream,
  async start(topics: TargetTopics, ctx: TargetContext, signal?: AbortSignal): Promise<RunningTarget> {
    if (ctx.transport === 'memory' || !ctx.broker) throw new Error('a Pulsar Function needs a broker');
    const child = await startEchoFunction({ name: topics.serviceId, ...topics }, ctx.broker, signal);
    try {
      await functionSubscribed(child, signal);
    } catch (err) {
      await stopEchoFunction(child);
      throw err;
    }
    return {
      description: 'Pulsar Function (Java, pulsar-admin functions localrun, thread runtime, one instance, async; RSS and CPU of both its JVMs)',
      pid: child.pid,
      sampler: new ProcSampler(child.pid!, ctx.sampleIntervalMs, true),
      exited: child.ended.then(() => child.exitText),
      output: () => child.output(),
      stop: () => stopEchoFunction(child),
    };
  },
};
