import { BENCH_MAIN, ManagedChild, PROBE_MODULE_URL } from '../child-process.js';
import { startFloorResponder } from '../floor-responder.js';
import { childTarget, inProcessTarget, type BenchTarget, type RunningTarget, type TargetContext, type TargetTopics } from './target.js';

/**
 * The floor: in-process on the memory transport; otherwise a Node process of its own
 * (`npm run bench -- serve-floor`), started exactly as the worker is, so both pay the same
 * process, transport and broker costs.
 */
export const floorTarget: BenchTarget = {
  name: 'floor',
  supports: () => true,
  async start(topics: TargetTopics, ctx: TargetContext, signal?: AbortSignal): Promise<RunningTarget> {
    if (ctx.transport === 'memory') {
      const floor = await startFloorResponder({ ...topics, transport: ctx.shared!, concurrency: ctx.concurrency, log: ctx.log, signal });
      return inProcessTarget('floor responder (in-process, memory)', ctx, () => floor.stop());
    }
    const b = ctx.broker!;
    const child = new ManagedChild({
      command: process.execPath,
      args: [
        ...(ctx.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.cpuProfDir}`] : []),
        ...(ctx.perfMap ? ['--perf-basic-prof'] : []),
        BENCH_MAIN,
        'serve-floor',
        '--transport',
        ctx.transport,
        '--pulsar-url',
        b.pulsarUrl,
        '--admin-url',
        b.adminUrl,
        '--request-topic',
        topics.requestTopic,
        '--response-topic',
        topics.responseTopic,
        '--subscription',
        topics.subscription,
        '--concurrency',
        String(ctx.concurrency),
      ],
      env: { ...process.env, NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import=${PROBE_MODULE_URL}`.trim(), LOG_LEVEL: 'info' },
      ipc: true,
      label: 'floor responder',
    });
    try {
      await child.waitForLine(/floor is serving/, 60_000, signal);
    } catch (err) {
      await child.kill();
      throw err;
    }
    return childTarget(`floor responder (child process, ${ctx.transport})`, child, ctx);
  },
};

/**
 * The floor on the WebSocket API whatever the run's transport, its agents too: what the
 * native client is judged against, side by side in the same rounds.
 */
export const wsFloorTarget: BenchTarget = {
  name: 'ws-floor',
  supports: () => true,
  start: (topics, ctx, signal) => floorTarget.start(topics, { ...ctx, transport: 'pulsar-ws' }, signal),
};
