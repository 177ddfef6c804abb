import { join } from 'node:path';
import pino from 'pino';
import { startApp } from '../../src/assembly/app.js';
import { createLogger } from '../../src/logging.js';
import { loadSecrets } from '../../src/secrets.js';
import { readSettings } from '../../src/settings.js';
import { ECHO_ARGUMENTS, writeServiceConfig } from '../service-config.js';
import { TOOLWIRE_BIN } from '../child-process.js';
import { startWorkerProcess, workerLauncher } from '../worker-process.js';
import { childTarget, inProcessTarget, type BenchTarget, type RunningTarget, type TargetContext, type TargetTopics } from './target.js';

/**
 * toolwire itself: the real worker (descriptors, validation, module plugin, builtin echo)
 * serving an echo-service on the run's topics. On a broker it is a process of its own —
 * `toolwire run` when the CLI can open the transport — so its RSS and event loop are its
 * own and it does not share a thread with the load generator. On the memory transport it
 * runs in-process (startApp), which is only a quick local check.
 */
export const toolwireTarget: BenchTarget = toolwireBuild('toolwire', () => TOOLWIRE_BIN);

/**
 * Another build of toolwire (--baseline DIR: a checkout with its `dist` built), run the same
 * way in the same rounds, so that a change is measured against the code before it side by
 * side on one broker, not in two runs whose floors differ.
 */
export const baselineTarget: BenchTarget = toolwireBuild('baseline', (ctx) => {
  if (!ctx.baselineDir) throw new Error('the baseline target needs --baseline DIR');
  return join(ctx.baselineDir, 'bin', 'toolwire.js');
});

function toolwireBuild(name: 'toolwire' | 'baseline', bin: (ctx: TargetContext) => string): BenchTarget {
  return {
    name,
    supports: () => true,
    async start(topics: TargetTopics, ctx: TargetContext, signal?: AbortSignal): Promise<RunningTarget> {
      const config = await writeServiceConfig([
        {
          id: topics.serviceId,
          requestQueue: topics.requestTopic,
          responseQueue: topics.responseTopic,
          module: 'builtin:echo',
          concurrency: ctx.concurrency,
          tools: [{ name: `${topics.serviceId}-echo`, arguments: ECHO_ARGUMENTS }],
        },
      ]);
      try {
        if (ctx.transport === 'memory') {
          if (name === 'baseline') throw new Error('the baseline build runs only as a process of its own, on a broker');
          const env = {
            TOOLWIRE_CONFIG_DIR: config.dir,
            TOOLWIRE_HTTP_PORT: 'off',
            TOOLWIRE_CONCURRENCY: String(ctx.concurrency),
            LOG_LEVEL: ctx.workerLogLevel,
          };
          const settings = readSettings(env);
          // Lines are formatted as in production but thrown away: they would garble the progress bar.
          const log = createLogger({ level: ctx.workerLogLevel, destination: pino.destination({ dest: '/dev/null', sync: false }) });
          const app = await startApp({ settings, transport: ctx.shared!, secrets: loadSecrets(env), log });
          return inProcessTarget('toolwire worker (in-process startApp, memory)', ctx, async () => {
            await app.stop();
            await config.remove();
          });
        }
        const env = name === 'baseline' ? ctx.baselineEnv : {};
        const plain = workerLauncher(ctx.transport, bin(ctx));
        const settings = Object.entries(env).map(([k, v]) => `${k}=${v}`);
        const launcher = settings.length > 0 ? { ...plain, description: `${plain.description}, ${settings.join(' ')}` } : plain;
        const child = await startWorkerProcess(
          {
            launcher,
            configDir: config.dir,
            broker: ctx.broker!,
            transport: ctx.transport,
            logLevel: ctx.workerLogLevel,
            env: { TOOLWIRE_CONCURRENCY: String(ctx.concurrency), ...env },
            probe: true,
            ...(ctx.cpuProfDir ? { cpuProfDir: ctx.cpuProfDir } : {}),
            ...(ctx.perfMap ? { perfMap: true } : {}),
            label: `${name} worker`,
          },
          signal,
        );
        return childTarget(launcher.description, child, ctx, () => config.remove());
      } catch (err) {
        await config.remove();
        throw err;
      }
    },
  };
}
