import { ToolClient, ToolResponseError } from '../../src/client/tool-client.js';
import type { ConfigItem, ConfigStore } from '../../src/config/config-store.js';
import { DirectoryConfigStore } from '../../src/config/directory-store.js';
import { BrokerConfigApi } from '../../src/config/trustgraph/broker-config-api.js';
import { TrustGraphConfigStore } from '../../src/config/trustgraph/trustgraph-store.js';
import { ErrorCode, errorMessage } from '../../src/errors.js';
import type { ManagedChild } from '../child-process.js';
import { transportFor } from '../transport-for.js';
import { drillTopics, removeTopics, type DrillContext } from './drill-context.js';
import { drillResult, type DrillResult } from './drill-result.js';
import { DrillWorker } from './drill-worker.js';
import { configQueues, startConfigService, trustGraphSourceEnv } from './trustgraph-config-service.js';

export interface ConfigReloadDrillOptions {
  readonly reloads: number;
  /** Agents calling the unchanged tool all along, each one call at a time. */
  readonly loadAgents: number;
  /** Where descriptors live: TrustGraph's config service (its own code, in Python) or a watched directory. */
  readonly source: 'trustgraph' | 'directory';
  /** Request topics persistent instead of TrustGraph's non-persistent kind. */
  readonly persistentRequests?: boolean;
}

export const RELOAD_DRILL = { short: { reloads: 10, loadAgents: 4 }, long: { reloads: 100, loadAgents: 8 } } as const;

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/**
 * Change a live worker's catalog again and again while agents call a tool the changes leave
 * alone. Each change replaces the `fresh` service (a new timeout) and re-keys its tool (a new
 * config value), in one put; the time from the put to the first answer from the re-keyed
 * tool is measured. Passes when every change was served and no call of the unchanged tool
 * failed or went unanswered. Times are reported, never asserted.
 */
export async function configReloadDrill(ctx: DrillContext, o: ConfigReloadDrillOptions): Promise<DrillResult> {
  const started = Date.now();
  const name = `${o.source === 'trustgraph' ? 'config-reload' : 'config-reload-dir'}${o.persistentRequests ? '-persistent' : ''}`;
  // Responses non-persistent as TrustGraph's; requests of TrustGraph's kind unless asked.
  const steady = drillTopics('steady', false, o.persistentRequests ?? false);
  const fresh = drillTopics('fresh', false, o.persistentRequests ?? false);
  const queues = configQueues(steady.id);
  const service = (t: typeof steady, extra: Record<string, unknown>) => ({
    id: t.id,
    'request-queue': t.requestTopic,
    'response-queue': t.responseTopic,
    plugin: { kind: 'module', module: 'builtin:echo' },
    ...extra,
  });
  const descriptors = (n: number): ConfigItem[] => [
    { type: 'tool-service', key: fresh.id, value: JSON.stringify(service(fresh, { 'config-params': ['n'], 'timeout-ms': 10_000 + n })) },
    { type: 'tool', key: 'fresh', value: JSON.stringify({ name: 'fresh', service: fresh.id, n, arguments: [{ name: 'text', type: 'string' }] }) },
  ];
  const agent = await transportFor(ctx.transport, ctx.broker, ctx.log);
  const client = new ToolClient(agent, ctx.log);
  let configService: ManagedChild | undefined;
  let store: ConfigStore | undefined;
  let worker: DrillWorker | undefined;
  const load = { answered: 0, failed: 0, lost: 0 };
  let loading = true;
  const agents: Promise<void>[] = [];
  try {
    const initial = [
      { type: 'tool-service', key: steady.id, value: JSON.stringify(service(steady, {})) },
      { type: 'tool', key: 'steady', value: JSON.stringify({ name: 'steady', service: steady.id, arguments: [{ name: 'text', type: 'string' }] }) },
      ...descriptors(0),
    ];
    if (o.source === 'trustgraph') {
      configService = await startConfigService(ctx.broker, queues, steady.id, ctx.signal);
      store = new TrustGraphConfigStore(new BrokerConfigApi(agent, ctx.log, { queues: queues.full }), 'default');
      await store.put(initial);
      worker = await DrillWorker.create({
        transport: ctx.transport,
        broker: ctx.broker,
        log: ctx.log,
        services: [],
        env: trustGraphSourceEnv(queues),
      });
    } else {
      worker = await DrillWorker.create({ transport: ctx.transport, broker: ctx.broker, log: ctx.log, services: [], env: { TOOLWIRE_CONFIG_POLL_MS: '0' } });
      store = new DirectoryConfigStore(worker.configDir);
      await store.put(initial);
    }
    await worker.start(ctx.signal);
    ctx.say(`${name}: ${worker.launcher.description}; ${o.reloads} reloads under ${o.loadAgents} agents`);

    const call = (topics: typeof steady, config: Record<string, unknown>, text: string) =>
      client.call({ requestQueue: topics.requestTopic, responseQueue: topics.responseTopic, config, arguments: { text }, timeoutMs: 10_000 });
    for (let a = 0; a < o.loadAgents; a++) {
      agents.push(
        (async () => {
          for (let n = 0; loading; n++) {
            const text = `a${a}-${n}`;
            try {
              if ((await call(steady, {}, text)) === text) load.answered++;
              else load.failed++;
            } catch (err) {
              if (err instanceof ToolResponseError) load.failed++;
              else load.lost++;
            }
          }
        })(),
      );
    }

    const latencies: number[] = [];
    let unserved = 0;
    /** Probes of the changing service that got no answer at all (lost across a reload). */
    let probesLost = 0;
    for (let n = 1; n <= o.reloads; n++) {
      const t0 = performance.now();
      await store.put(descriptors(n));
      // Ask until the re-keyed tool answers: before the change is applied, config n is nobody's.
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          await call(fresh, { n }, `r${n}`);
          latencies.push(performance.now() - t0);
          break;
        } catch (err) {
          const notYet = err instanceof ToolResponseError && err.type === ErrorCode.UnknownTool;
          if (!(err instanceof ToolResponseError)) probesLost++;
          if (!notYet) ctx.log.warn({ err: errorMessage(err), reload: n }, 'probe failed');
          if (Date.now() > deadline) {
            unserved++;
            break;
          }
        }
      }
    }
    loading = false;
    await Promise.all(agents);
    const sorted = [...latencies].sort((a, b) => a - b);
    const passed = unserved === 0 && probesLost === 0 && load.failed === 0 && load.lost === 0 && load.answered > 0;
    return drillResult(
      name,
      ctx.form,
      started,
      'every change (a service replaced and its tool re-keyed, in one put) is served without a restart; no call of the unchanged tool fails or goes unanswered meanwhile, and no call of the changing one goes unanswered',
      passed,
      { reloads: o.reloads, served: latencies.length, unserved, probesLost, steadyAnswered: load.answered, steadyFailed: load.failed, steadyLost: load.lost },
      { putToAnswerMedianMs: percentile(sorted, 0.5), putToAnswerP90Ms: percentile(sorted, 0.9), putToAnswerWorstMs: sorted.at(-1) ?? NaN },
      [
        worker.launcher.description,
        o.source === 'trustgraph'
          ? 'descriptors in TrustGraph’s config service (its own Python code, in-memory table), pokes only (no polling)'
          : 'descriptors in a watched directory (no polling)',
      ],
    );
  } finally {
    loading = false;
    await Promise.all(agents);
    await client.close().catch(() => undefined);
    await worker?.stop().catch(() => undefined);
    await worker?.remove();
    await store?.close?.().catch(() => undefined);
    await configService?.stop(10_000).catch(() => undefined);
    await agent.close().catch(() => undefined);
    await removeTopics(ctx.broker, [steady.requestTopic, steady.responseTopic, fresh.requestTopic, fresh.responseTopic]);
  }
}
