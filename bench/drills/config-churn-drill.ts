import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { getEventListeners } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startApp, type App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import type { ConfigItem, ConfigStore } from '../../src/config/config-store.js';
import { DirectoryConfigStore } from '../../src/config/directory-store.js';
import { BrokerConfigApi } from '../../src/config/trustgraph/broker-config-api.js';
import { TrustGraphConfigStore } from '../../src/config/trustgraph/trustgraph-store.js';
import { loadSecrets } from '../../src/secrets.js';
import { readSettings } from '../../src/settings.js';
import { cancelTopic } from '../../src/transport/topic-name.js';
import type { Transport } from '../../src/transport/transport.js';
import type { ManagedChild } from '../child-process.js';
import { fleetItems, TOOLS_PER_SERVICE, writeItems, type FleetShape } from '../fleet-config.js';
import { adminOf, transportFor } from '../transport-for.js';
import { drillTopics, removeTopics, type DrillContext } from './drill-context.js';
import { drillResult, type DrillResult } from './drill-result.js';
import { configQueues, startConfigService, trustGraphSourceEnv } from './trustgraph-config-service.js';

export interface ConfigChurnOptions {
  /** Config changes after the warm-up round (each a put or a delete the worker applies). */
  readonly changes: number;
  readonly source: 'directory' | 'trustgraph';
  /**
   * Services of 10 tools each written beside the churned ones before the worker starts (the
   * directory source only), so that every change is read and built in a fleet of that size.
   * They name no plugin: the worker keeps them in its catalog and consumes none of their topics.
   */
  readonly fleet?: number;
}

/** The fleet the config-churn-dir-fleet drill churns in: 1,000 services, 10,000 tools. */
export const CHURN_FLEET_SERVICES = 1_000;

export const CHURN_DRILL = { short: { changes: 90 }, long: { changes: 1_000 } } as const;

/** A change served later than this was most likely served by the poll, its poke lost (reported, not asserted). */
const SLOW_CHANGE_MS = 2_000;

/** Growth allowed in the heap after a full GC, between the warm-up and the end (bytes). */
const HEAP_TOLERANCE = 24 * 1024 * 1024;

/** What the soak compares before and after the churn. */
export interface ChurnSample {
  /** Subscriptions and consumers the broker shows on the churned topics and their namespaces' cancel topics. */
  readonly subscriptions: number;
  readonly consumers: number;
  /** Sample lines in /metrics that name a service (per-service and per-tool series). */
  readonly series: number;
  /** Listeners on the worker's hard-stop signal, and on the process. */
  readonly hardStopListeners: number;
  readonly processListeners: number;
  readonly heapBytes: number;
  readonly rssBytes: number;
}

/** A full GC when the process allows it (the flag is set at run time; V8 reads it for new contexts). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
}

/**
 * Add and remove services and tools again and again on a live worker (a service in a
 * persistent-topic namespace and one in a non-persistent-topic namespace, each namespace
 * emptied at the end of every round), through the directory or TrustGraph's own config
 * service, on the real broker, with a call of each new tool. Passes when, after the churn,
 * the broker shows no more subscriptions or consumers than after the warm-up round, /metrics
 * no more series, the worker's signal and the process no more listeners, and the heap grew
 * by less than a tolerance. Module tools only: nothing is spawned.
 */
export async function configChurnDrill(ctx: DrillContext, o: ConfigChurnOptions): Promise<DrillResult> {
  const started = Date.now();
  if (o.fleet !== undefined && o.source !== 'directory') throw new Error('a fleet is written to a config directory only');
  const name = `config-churn-${o.source === 'trustgraph' ? 'tg' : 'dir'}${o.fleet ? '-fleet' : ''}`;
  const steady = drillTopics('churn-steady', false, true);
  const tag = steady.id.slice(-8);
  const namespaces = { p: `tg/churn-p-${tag}`, n: `tg/churn-n-${tag}` };
  const topics = {
    p: `persistent://${namespaces.p}/churn-request`,
    n: `non-persistent://${namespaces.n}/churn-request`,
    response: `non-persistent://tg/response/churn-${tag}`,
  };
  const watched = [topics.p, topics.n, cancelTopic(topics.p)!, cancelTopic(topics.n)!];
  const admin = adminOf(ctx.broker);
  const json = (v: unknown) => JSON.stringify(v);
  const svc = (id: string, requestQueue: string, module: string): ConfigItem => ({
    type: 'tool-service',
    key: id,
    value: json({ id, 'request-queue': requestQueue, 'response-queue': topics.response, 'config-params': ['op'], plugin: { kind: 'module', module } }),
  });
  const tool = (toolName: string, service: string, args: readonly { name: string; type: string }[]): ConfigItem => ({
    type: 'tool',
    key: toolName,
    value: json({ name: toolName, service, op: toolName, arguments: args }),
  });
  const text = [{ name: 'text', type: 'string' }];
  const expr = [{ name: 'expression', type: 'string' }];

  let agent: Transport | undefined;
  let client: ToolClient | undefined;
  let configService: ManagedChild | undefined;
  let store: ConfigStore | undefined;
  let app: App | undefined;
  let dir: string | undefined;
  let applied = 0;
  let slowChanges = 0;
  try {
    for (const ns of Object.values(namespaces)) await admin.createNamespace(ns);
    agent = await transportFor(ctx.transport, ctx.broker, ctx.log);
    client = new ToolClient(agent, ctx.log);
    dir = await mkdtemp(join(tmpdir(), 'toolwire-churn-'));
    await mkdir(join(dir, 'tool-service'));
    await mkdir(join(dir, 'tool'));
    const initial = [svc('churn-steady', steady.requestTopic, 'builtin:echo'), tool('steady', 'churn-steady', text)];
    const env: Record<string, string> = {
      TOOLWIRE_CONFIG_DIR: dir,
      TOOLWIRE_CONFIG_POLL_MS: '0',
      TOOLWIRE_HTTP_PORT: '0',
      TOOLWIRE_TRANSPORT: ctx.transport,
      PULSAR_ADMIN_URL: ctx.broker.adminUrl,
      PULSAR_URL: ctx.broker.pulsarUrl,
    };
    if (o.source === 'trustgraph') {
      const queues = configQueues(tag);
      configService = await startConfigService(ctx.broker, queues, tag, ctx.signal);
      store = new TrustGraphConfigStore(new BrokerConfigApi(agent, ctx.log, { queues: queues.full }), 'default');
      // A slow poll behind the pokes, as in a deployment (there 30 s): a poke is a non-persistent
      // message, and one in several hundred changes went unserved with pokes alone (old and new code alike).
      Object.assign(env, trustGraphSourceEnv(queues), {
        TOOLWIRE_CONFIG_POLL_MS: String(SLOW_CHANGE_MS),
        // The churn namespaces are the drill's own: from a remote source the operator lists them,
        // beside TrustGraph's, or the worker refuses services there (docs/security.md).
        TOOLWIRE_ALLOW_NAMESPACES: ['tg/request', 'tg/flow', 'tg/response', namespaces.p, namespaces.n].join(','),
      });
    } else {
      store = new DirectoryConfigStore(dir);
      if (o.fleet) {
        const fleet: FleetShape = {
          services: o.fleet,
          prefix: `fleet-${tag}`,
          requestQueue: (n) => `persistent://tg/request/churn-fleet-${tag}-${n}`,
          responseQueue: topics.response,
          served: false,
        };
        await writeItems(dir, fleetItems(fleet));
      }
    }
    await store.put(initial);
    const transport = await transportFor(ctx.transport, ctx.broker, ctx.log);
    try {
      app = await startApp({ settings: readSettings(env), transport, secrets: loadSecrets({}), log: ctx.log, signal: ctx.signal });
    } catch (err) {
      await transport.close();
      throw err;
    }
    const live = app;
    const s = store;
    const c = client;

    /** Make one change and wait until the worker serves it. */
    const change = async (what: string, write: () => Promise<unknown>, served: () => boolean): Promise<void> => {
      const t0 = Date.now();
      await write();
      const deadline = t0 + 30_000;
      while (!served()) {
        if (Date.now() > deadline) throw new Error(`${name}: change ${applied + 1} (${what}) not served within 30 s`);
        await new Promise((r) => setTimeout(r, 10));
      }
      if (Date.now() - t0 > SLOW_CHANGE_MS) slowChanges++;
      applied++;
    };
    const has = (t: string) => live.catalog.tools.has(t);
    const serves = (id: string) => live.worker.served().some((x) => x.id === id);
    const call = async (requestQueue: string, toolName: string, args: Record<string, unknown>): Promise<string> =>
      c.call({ requestQueue, responseQueue: topics.response, tool: toolName, config: {}, arguments: args, timeoutMs: 15_000 });

    /**
     * One round: nine changes, both churn namespaces empty at its end. Names are new each
     * round (as services and tools come and go in a fleet); the topics stay.
     */
    const changesPerRound = 9;
    const round = async (n: number): Promise<void> => {
      const [P, N, p1, p2, p3, n1] = [`churn-p-${n}`, `churn-n-${n}`, `p1-${n}`, `p2-${n}`, `p3-${n}`, `n1-${n}`];
      const echoes = async (t: string) => {
        if ((await call(topics.p, t, { text: t })) !== t) throw new Error(`${name}: wrong answer from ${t}`);
      };
      await change(
        'add P with p1, p2',
        () => s.put([svc(P, topics.p, 'builtin:echo'), tool(p1, P, text), tool(p2, P, text)]),
        () => serves(P) && has(p1) && has(p2),
      );
      await echoes(p1);
      await echoes(p2);
      await change(
        'remove p2',
        () => s.delete('tool', p2),
        () => !has(p2),
      );
      await change(
        'add N with n1',
        () => s.put([svc(N, topics.n, 'builtin:calculator'), tool(n1, N, expr)]),
        () => serves(N) && has(n1),
      );
      if ((await call(topics.n, n1, { expression: `${n}+1` })) !== String(n + 1)) throw new Error(`${name}: wrong answer from ${n1}`);
      await change(
        'add p3',
        () => s.put([tool(p3, P, text)]),
        () => has(p3),
      );
      await echoes(p3);
      await change(
        'remove p1',
        () => s.delete('tool', p1),
        () => !has(p1),
      );
      await change(
        'remove p3',
        () => s.delete('tool', p3),
        () => !has(p3),
      );
      await change(
        'remove P',
        () => s.delete('tool-service', P),
        () => !serves(P),
      );
      await change(
        'remove n1',
        () => s.delete('tool', n1),
        () => !has(n1),
      );
      await change(
        'remove N',
        () => s.delete('tool-service', N),
        () => !serves(N),
      );
    };

    const sample = async (): Promise<ChurnSample> => {
      let subscriptions = 0;
      let consumers = 0;
      for (const t of watched) {
        const subs = (await admin.topicStats(t))?.subscriptions ?? {};
        subscriptions += Object.keys(subs).length;
        for (const sub of Object.values(subs)) consumers += sub.consumers?.length ?? 0;
      }
      const metrics = await (await fetch(`http://${live.http!.host}:${live.http!.port}/metrics`)).text();
      const series = metrics.split('\n').filter((l) => !l.startsWith('#') && l.includes('service="')).length;
      collectGarbage();
      const mem = process.memoryUsage();
      return {
        subscriptions,
        consumers,
        series,
        hardStopListeners: getEventListeners(live.worker.hardStopSignal, 'abort').length,
        processListeners: process.eventNames().reduce((n, e) => n + process.listenerCount(e), 0),
        heapBytes: mem.heapUsed,
        rssBytes: mem.rss,
      };
    };
    const counts = (x: ChurnSample) => [x.subscriptions, x.consumers, x.series, x.hardStopListeners, x.processListeners];
    // No service is left in the churn namespaces at the end of a round: nothing of the worker's may stay on their topics.
    const nothing = { subscriptions: 0, consumers: 0 };
    /**
     * Retired instances let go in the background: wait (with a deadline) until no count exceeds
     * the reference's; without one, until two samples in a row agree.
     */
    const settled = async (reference: ChurnSample | undefined): Promise<ChurnSample> => {
      const deadline = Date.now() + 30_000;
      let last: ChurnSample | undefined;
      for (;;) {
        const now = await sample();
        const flat =
          reference === undefined
            ? last !== undefined && counts(now).every((v, i) => v === counts(last!)[i])
            : counts(now).every((v, i) => v <= counts(reference)[i]!) && now.subscriptions === nothing.subscriptions && now.consumers === nothing.consumers;
        if (flat || Date.now() > deadline) return now;
        last = now;
        await new Promise((r) => setTimeout(r, 500));
      }
    };

    // Warm-up: one round, so that every code path and cache has been through once.
    await round(0);
    const warm = await settled(undefined);
    const rounds = Math.max(1, Math.ceil(o.changes / changesPerRound));
    ctx.say(
      `${name}: ${rounds * changesPerRound} changes through ${o.source === 'trustgraph' ? "TrustGraph's config service" : 'the directory'}; warm: ${JSON.stringify(warm)}`,
    );
    const churnStarted = Date.now();
    for (let n = 1; n <= rounds; n++) await round(n);
    const churnMs = Date.now() - churnStarted;
    const after = await settled(warm);
    const steadyAnswer = await call(steady.requestTopic, 'steady', { text: 'still here' });
    const heapGrowth = after.heapBytes - warm.heapBytes;
    const passed =
      warm.subscriptions === nothing.subscriptions &&
      warm.consumers === nothing.consumers &&
      after.subscriptions === nothing.subscriptions &&
      after.consumers === nothing.consumers &&
      after.series <= warm.series &&
      after.hardStopListeners <= warm.hardStopListeners &&
      after.processListeners <= warm.processListeners &&
      heapGrowth <= HEAP_TOLERANCE &&
      steadyAnswer === 'still here';
    return drillResult(
      name,
      ctx.form,
      started,
      `with every churned service removed, the broker shows no subscription or consumer of the worker on the churned request topics and their namespaces' cancel topics (after the warm-up round and after ${rounds * changesPerRound} config changes); after the churn /metrics no more series, the hard-stop signal and the process no more listeners, and the heap (after a full GC) grew by at most ${HEAP_TOLERANCE / 1024 / 1024} MB`,
      passed,
      {
        changes: applied,
        warmSubscriptions: warm.subscriptions,
        afterSubscriptions: after.subscriptions,
        warmConsumers: warm.consumers,
        afterConsumers: after.consumers,
        warmSeries: warm.series,
        afterSeries: after.series,
        warmHardStopListeners: warm.hardStopListeners,
        afterHardStopListeners: after.hardStopListeners,
        warmProcessListeners: warm.processListeners,
        afterProcessListeners: after.processListeners,
      },
      {
        slowChanges,
        warmHeapMB: warm.heapBytes / 2 ** 20,
        afterHeapMB: after.heapBytes / 2 ** 20,
        warmRssMB: warm.rssBytes / 2 ** 20,
        afterRssMB: after.rssBytes / 2 ** 20,
        msPerChange: churnMs / (rounds * changesPerRound),
      },
      [
        `in-process worker on ${ctx.transport}; module tools (builtin echo and calculator), nothing spawned`,
        o.source === 'trustgraph'
          ? `descriptors in TrustGraph's config service (its own Python code), pokes and a ${SLOW_CHANGE_MS} ms poll`
          : 'descriptors in a watched directory (no polling)',
        ...(o.fleet
          ? [
              `every change read and built beside a fleet of ${o.fleet} services and ${o.fleet * TOOLS_PER_SERVICE} tools in the same directory (no plugin: in the catalog, not consumed)`,
            ]
          : []),
      ],
    );
  } finally {
    await app?.stop(2_000).catch(() => undefined);
    await client?.close().catch(() => undefined);
    await store?.close?.().catch(() => undefined);
    await configService?.stop(10_000).catch(() => undefined);
    await agent?.close().catch(() => undefined);
    await removeTopics(ctx.broker, [steady.requestTopic, topics.p, topics.n, topics.response]);
    for (const ns of Object.values(namespaces)) await admin.deleteNamespace(ns).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}
