import { join } from 'node:path';
import { ManagedChild, REPO_ROOT } from '../child-process.js';
import { ProcSampler } from '../resource-sampler.js';
import type { BenchTarget, RunningTarget, TargetContext, TargetTopics } from './target.js';

const PEER = join(REPO_ROOT, 'test', 'interop', 'py', 'bench_echo_service.py');

/**
 * The Python peer: TrustGraph's DynamicToolService (trustgraph-base from PyPI, in the venv
 * of scripts/python-env.sh) answering the same echo with `--concurrency` set to the same K.
 * It speaks the binary protocol through the Python pulsar-client; it never streams.
 */
export const pythonTarget: BenchTarget = {
  name: 'python',
  supports: (stream) => !stream,
  async start(topics: TargetTopics, ctx: TargetContext, signal?: AbortSignal): Promise<RunningTarget> {
    if (ctx.transport === 'memory' || !ctx.broker) throw new Error('the Python peer needs a broker (it cannot join the in-process memory transport)');
    if (!ctx.python) throw new Error('no Python environment (scripts/python-env.sh)');
    const child = new ManagedChild({
      command: ctx.python,
      args: [
        PEER,
        '--id',
        topics.serviceId,
        '-p',
        ctx.broker.pulsarUrl,
        '--pulsar-admin-url',
        ctx.broker.adminUrl,
        '--request-queue',
        topics.requestTopic,
        '--response-queue',
        topics.responseTopic,
        '--concurrency',
        String(ctx.concurrency),
        '--no-metrics',
        '--no-loki-enabled',
        '-l',
        'WARNING',
      ],
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
      ipc: false,
      label: 'Python DynamicToolService',
    });
    try {
      await child.waitForLine(/bench echo service .* serving/, 120_000, signal);
    } catch (err) {
      await child.kill();
      throw err;
    }
    return {
      description: 'TrustGraph DynamicToolService (Python child process, binary protocol)',
      pid: child.pid,
      sampler: new ProcSampler(child.pid!, ctx.sampleIntervalMs),
      exited: child.ended.then(() => child.exitText),
      output: () => child.output(),
      stop: async () => {
        // SIGINT is what its launch loop treats as "stop" (it unsubscribes on the way out).
        await child.stop(10_000, 'SIGINT');
      },
    };
  },
};
