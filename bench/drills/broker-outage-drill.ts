import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerConfigApi } from '../../src/config/trustgraph/broker-config-api.js';
import { TrustGraphConfigStore } from '../../src/config/trustgraph/trustgraph-store.js';
import type { ManagedChild } from '../child-process.js';
import { OwnBroker } from '../own-broker.js';
import { transportFor } from '../transport-for.js';
import { DirectLanes, FrontDoorLane, gatewayCall, mcpSession, type CallTally, type FrontDoorCall } from './call-lanes.js';
import { drillTopics, type DrillContext, type DrillTopics } from './drill-context.js';
import { drillResult, type DrillResult } from './drill-result.js';
import type { DrillWorker } from './drill-worker.js';
import { ReadinessWatch, startFleetWorker, startMcpServe, type FleetMember } from './outage-fleet.js';
import { configQueues, startConfigService } from './trustgraph-config-service.js';

export interface BrokerOutageDrillOptions {
  readonly outages: number;
  /** How long the broker stays down each time. */
  readonly downMs: number;
  /** Agents per request-topic kind calling straight over the broker. */
  readonly agentsPerKind: number;
  /** Each process must be ready again within this of the broker answering. */
  readonly readyWithinMs: number;
}

export const OUTAGE_DRILL = {
  short: { outages: 1, downMs: 15_000, agentsPerKind: 2, readyWithinMs: 10_000 },
  long: { outages: 2, downMs: 60_000, agentsPerKind: 4, readyWithinMs: 10_000 },
} as const;

const LOST = 'broker connection lost; reconnecting';
const RECOVERED = 'broker connection recovered';

/** Service and tool descriptors of the drill, as TrustGraph's config holds them. */
function descriptors(t: DrillTopics, tool: string): { type: string; key: string; value: string }[] {
  return [
    {
      type: 'tool-service',
      key: t.id,
      value: JSON.stringify({
        id: t.id,
        'request-queue': t.requestTopic,
        'response-queue': t.responseTopic,
        plugin: { kind: 'module', module: 'builtin:echo' },
        concurrency: 16,
      }),
    },
    { type: 'tool', key: tool, value: JSON.stringify({ name: tool, service: t.id, arguments: [{ name: 'text', type: 'string' }] }) },
  ];
}

/**
 * Stop the broker for `downMs` under steady calls, start it again, and again. The fleet: two
 * workers and `toolwire mcp serve`, all on TrustGraph's own config service, and calls on a
 * persistent and a non-persistent request topic, straight over the broker, through the first
 * worker's HTTP gateway and through MCP. Passes when no process exits, each is ready again
 * within `readyWithinMs` of the broker answering (the workers' /readyz; `mcp serve`, which has
 * no /readyz, by an MCP call answered), a change put after the outages is served by all three,
 * every request on the persistent topic is answered, and each process logged each outage once
 * and its recovery once (pulsar-ws; libpulsar logs its reconnects itself).
 */
export async function brokerOutageDrill(ctx: DrillContext, o: BrokerOutageDrillOptions): Promise<DrillResult> {
  const started = Date.now();
  const say = (line: string): void => ctx.say(`broker-outage [${Math.round((Date.now() - started) / 1000)} s]: ${line}`);
  say("starting a broker of the drill's own (scripts/pulsar-broker.sh, own run dir and ports)");
  const broker = await OwnBroker.start(ctx.signal);
  const persistent = drillTopics('outage-p', true, true);
  const nonPersistent = drillTopics('outage-np', false, false);
  const fresh = drillTopics('outage-fresh', true, true);
  const queues = configQueues(persistent.id);
  const env = { broker: broker.endpoints, transport: ctx.transport, queues, log: ctx.log, signal: ctx.signal };
  const children: ManagedChild[] = [];
  const workers: DrillWorker[] = [];
  const watches: ReadinessWatch[] = [];
  let agent: Awaited<ReturnType<typeof transportFor>> | undefined;
  let api: BrokerConfigApi | undefined;
  const stops: (() => Promise<void>)[] = [];
  try {
    const configService = await startConfigService(broker.endpoints, queues, persistent.id, ctx.signal);
    children.push(configService);
    agent = await transportFor(ctx.transport, broker.endpoints, ctx.log);
    api = new BrokerConfigApi(agent, ctx.log, { queues: queues.full });
    const store = new TrustGraphConfigStore(api, 'default');
    await store.put([...descriptors(persistent, 'p-echo'), ...descriptors(nonPersistent, 'np-echo')]);

    const members: FleetMember[] = [];
    for (const name of ['worker-a', 'worker-b']) {
      const { member, worker } = await startFleetWorker(name, env);
      workers.push(worker);
      members.push(member);
    }
    const mcp = await startMcpServe(env);
    members.push(mcp);
    children.push(...members.map((m) => m.child));
    const [a, b] = members as [FleetMember, FleetMember, FleetMember];
    const readiness = new Map([a, b].map((m) => [m.name, new ReadinessWatch(m.baseUrl)]));
    watches.push(...readiness.values());
    say('fleet up');
    const session = await mcpSession(`${mcp.baseUrl}/mcp`);
    stops.push(() => session.close());
    say(`${broker.endpoints.adminUrl}; 2 workers, mcp serve, TrustGraph config service; ${o.outages} outage(s) of ${o.downMs} ms (${ctx.transport})`);

    // Steady calls on both kinds: straight over the broker, through the gateway, through MCP.
    const direct = {
      persistent: await DirectLanes.start(agent, persistent, { lanes: o.agentsPerKind, waitMs: 600_000, paceMs: 50 }, ctx.signal),
      nonPersistent: await DirectLanes.start(agent, nonPersistent, { lanes: o.agentsPerKind, waitMs: 15_000, paceMs: 50 }, ctx.signal),
    };
    const gateway = new FrontDoorLane('gateway', gatewayCall(a.baseUrl, 60_000), ['p-echo', 'np-echo']);
    const mcpLane = new FrontDoorLane('mcp', session.call, ['p-echo', 'np-echo']);
    stops.push(
      () => gateway.stop(),
      () => mcpLane.stop(),
      () => direct.persistent.stop(),
      () => direct.nonPersistent.stop(),
    );
    await waitUntil(() => direct.persistent.tally().answered >= 20 && direct.nonPersistent.tally().answered >= 20, 60_000, ctx.signal);

    const outages: { downMs: number; brokerStartMs: number; recoveryMs: Record<string, number | undefined> }[] = [];
    for (let n = 1; n <= o.outages; n++) {
      const stopAt = Date.now();
      await broker.stop();
      const downAt = Date.now();
      say(`outage ${n}: broker stopped (took ${downAt - stopAt} ms); down for ${o.downMs} ms`);
      await sleep(o.downMs, undefined, { signal: ctx.signal });
      const startAt = Date.now();
      await broker.startAgain(ctx.signal);
      const upAt = Date.now();
      say(`outage ${n}: broker answering after ${upAt - startAt} ms; waiting for the fleet`);
      const recoveryMs: Record<string, number | undefined> = {};
      const mcpBack = mcpReadyAt(session.call, upAt, 120_000);
      for (const [name, w] of readiness) {
        await waitUntil(() => w.readyAgainAfter(upAt) !== undefined, 120_000, ctx.signal).catch(() => undefined);
        const at = w.readyAgainAfter(upAt);
        recoveryMs[name] = at === undefined ? undefined : at - upAt;
      }
      const mcpAt = await mcpBack;
      recoveryMs['mcp-serve'] = mcpAt === undefined ? undefined : mcpAt - upAt;
      outages.push({ downMs: upAt - downAt, brokerStartMs: upAt - startAt, recoveryMs });
      say(
        `outage ${n}: ready again after ${Object.entries(recoveryMs)
          .map(([k, v]) => `${k} ${v ?? 'never'} ms`)
          .join(', ')}`,
      );
      // Calls flow again before the next step.
      const answered = direct.persistent.tally().answered;
      await waitUntil(() => direct.persistent.tally().answered >= answered + 40, 120_000, ctx.signal).catch(() => undefined);
    }

    // A change after the outages: a new service and tool, served by both workers and by MCP.
    const putAt = Date.now();
    await retry(() => store.put(descriptors(fresh, 'fresh-echo')), 60_000, ctx.signal);
    const { version } = await retry(() => store.read(['tool']), 30_000, ctx.signal);
    let changeServed = true;
    try {
      await waitUntil(
        async () => (await Promise.all([a, b].map((m) => configVersion(m.baseUrl)))).every((v) => v !== undefined && Number(v) >= version),
        60_000,
        ctx.signal,
      );
      await waitUntil(async () => (await session.tools()).includes('fresh-echo'), 60_000, ctx.signal);
      if ((await gatewayCall(a.baseUrl, 60_000)('fresh-echo', 'fresh-gw')) !== 'answered') changeServed = false;
      if ((await gatewayCall(b.baseUrl, 60_000)('fresh-echo', 'fresh-gw-b')) !== 'answered') changeServed = false;
      if ((await session.call('fresh-echo', 'fresh-mcp')) !== 'answered') changeServed = false;
    } catch {
      changeServed = false;
    }
    const changeServedMs = Date.now() - putAt;
    say(`the change put after the outages ${changeServed ? 'served' : 'NOT served'} after ${changeServedMs} ms; stopping the load`);

    await gateway.stop();
    await mcpLane.stop();
    await direct.persistent.stop();
    await direct.nonPersistent.stop();
    await direct.persistent.settle(120_000);
    say('load stopped');
    const exited = members.filter((m) => !m.child.running).map((m) => m.name);
    if (!configService.running) exited.push('config-service');

    const p = direct.persistent.tally();
    const np = direct.nonPersistent.tally();
    const counts: Record<string, number> = { outages: o.outages, processesExited: exited.length, changeServed: changeServed ? 1 : 0 };
    addTally(counts, 'persistent', p);
    addTally(counts, 'nonPersistent', np);
    for (const lane of [gateway, mcpLane])
      for (const [tool, t] of lane.tallies) addTally(counts, `${lane.name}${tool === 'p-echo' ? 'Persistent' : 'NonPersistent'}`, t);
    const figures: Record<string, number> = { changeServedMs };
    let readyInTime = true;
    outages.forEach((out, i) => {
      figures[`outage${i + 1}DownMs`] = out.downMs;
      figures[`outage${i + 1}BrokerStartMs`] = out.brokerStartMs;
      for (const [name, ms] of Object.entries(out.recoveryMs)) {
        figures[`outage${i + 1}Ready_${name}`] = ms ?? NaN;
        if (ms === undefined || ms > o.readyWithinMs) readyInTime = false;
      }
    });
    let logsOnce = true;
    const notes: string[] = [];
    for (const m of members) {
      const lost = m.logs.count(LOST);
      const recovered = m.logs.count(RECOVERED);
      counts[`${m.name}LostLines`] = lost;
      counts[`${m.name}RecoveredLines`] = recovered;
      const loud = [...m.logs.loud].map(([msg, k]) => `${msg} x${k}`).join('; ');
      counts[`${m.name}WarnLines`] = [...m.logs.loud.values()].reduce((x, y) => x + y, 0);
      notes.push(`${m.name} lines at warn or above: ${loud || 'none'}`);
      if (ctx.transport === 'pulsar-ws' && (lost !== o.outages || recovered !== o.outages)) logsOnce = false;
    }
    const passed = exited.length === 0 && readyInTime && changeServed && p.unanswered === 0 && p.failed === 0 && p.sent > 0 && np.answered > 0 && logsOnce;
    if (exited.length > 0) notes.push(`exited: ${exited.join(', ')}`);
    for (const [name, errors] of [
      ['direct persistent', direct.persistent.errors()],
      ['direct non-persistent', direct.nonPersistent.errors()],
      ['gateway', gateway.errors],
      ['mcp', mcpLane.errors],
    ] as const) {
      if (errors.length > 0) notes.push(`${name} errors (first ${errors.length}): ${errors.join(' | ')}`);
    }
    return drillResult(
      'broker-outage',
      ctx.form,
      started,
      `no process exits; each is ready within ${o.readyWithinMs} ms of the broker answering again; a change put after the outages is served; every request on the persistent topic is answered; each process logs each outage once and its recovery once`,
      passed,
      counts,
      figures,
      notes,
    );
  } finally {
    for (const s of stops) await s().catch(() => undefined);
    for (const w of watches) await w.stop();
    for (const c of children.slice(1).reverse()) await c.stop(20_000).catch(() => undefined);
    await children[0]?.stop(10_000).catch(() => undefined);
    for (const w of workers) await w.remove();
    await api?.close().catch(() => undefined);
    await agent?.close().catch(() => undefined);
    await broker.destroy();
  }
}

function addTally(counts: Record<string, number>, prefix: string, t: CallTally): void {
  for (const k of Object.keys(t) as (keyof CallTally)[]) counts[`${prefix}${k[0]!.toUpperCase()}${k.slice(1)}`] = t[k];
}

/** The config version a worker serves, from its /readyz. */
async function configVersion(baseUrl: string): Promise<string | undefined> {
  const r = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
  if (!r) return undefined;
  const body = (await r.json().catch(() => ({}))) as { config?: { version?: string } };
  return body.config?.version;
}

/**
 * When `mcp serve` first answers a call begun at or after `since`. The call is on the persistent
 * topic, so it waits for a worker rather than being dropped: it is answered once `mcp serve`
 * and a worker are both back.
 */
async function mcpReadyAt(call: FrontDoorCall, since: number, limitMs: number): Promise<number | undefined> {
  for (let n = 0; Date.now() - since < limitMs; n++) {
    const ok = await call('p-echo', `mcp-probe-${since}-${n}`).catch(() => undefined);
    if (ok === 'answered') return Date.now();
    await sleep(100);
  }
  return undefined;
}

/** Poll `pred` until it holds; throws after `ms`. */
async function waitUntil(pred: () => boolean | Promise<boolean>, ms: number, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(200, undefined, { signal });
  }
}

/** Call `fn` until it succeeds (a config service still reconnecting); throws its last error after `ms`. */
async function retry<T>(fn: () => Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline || signal.aborted) throw err;
      await sleep(500, undefined, { signal });
    }
  }
}
