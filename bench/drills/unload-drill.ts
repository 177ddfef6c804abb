import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import { adminOf, transportFor, type BrokerEndpoints } from '../transport-for.js';
import { DirectLanes } from './call-lanes.js';
import type { DrillContext, DrillTopics } from './drill-context.js';
import { drillResult, type DrillResult } from './drill-result.js';
import { DrillWorker } from './drill-worker.js';

export interface UnloadDrillOptions {
  /** Rounds of unloading every tool topic, then the namespace. */
  readonly rounds: number;
  /** Agents per request-topic kind, one request at a time each. */
  readonly agentsPerKind: number;
  /** Answers (on the persistent topic) between two rounds, so that each round lands on flowing load. */
  readonly answersBetweenRounds: number;
  /**
   * Where the workers and agents connect, spread over them in turn (a cluster's brokers; one
   * broker on standalone). The first also takes the admin calls.
   */
  readonly brokers?: readonly BrokerEndpoints[];
  /** Workers serving both services; default 2. */
  readonly workers?: number;
  /**
   * On a secured broker, the tokens of the workers' role and the agents' role, their permissions
   * granted beforehand; `brokers` then carry the superuser's token, for the drill's own calls
   * (unloads, lookups, reading the request topic). Default: everyone on `brokers`' token.
   */
  readonly roles?: { readonly workerToken: string; readonly agentToken: string };
  /**
   * Where the topics live: TrustGraph's request and response namespaces, whose grants the roles
   * have (both are unloaded each round). Default: one namespace of the drill's own for both,
   * made and deleted by it, so that a shared broker's other namespaces are never unloaded.
   */
  readonly namespaces?: { readonly request: string; readonly response: string };
}

export const UNLOAD_DRILL = {
  short: { rounds: 5, agentsPerKind: 2, answersBetweenRounds: 20 },
  long: { rounds: 20, agentsPerKind: 4, answersBetweenRounds: 50 },
} as const;

/** A service's topics, named after the run (`prefix`) so that runs on one broker never meet. */
function topicsIn(ns: { request: string; response: string }, prefix: string, id: string, persistent: boolean): DrillTopics {
  const kind = persistent ? 'persistent' : 'non-persistent';
  return { id, requestTopic: `${kind}://${ns.request}/${prefix}${id}-request`, responseTopic: `${kind}://${ns.response}/${prefix}${id}-response` };
}

/**
 * Unload every tool topic, then the whole namespace, again and again, under steady calls on a
 * persistent and a non-persistent request topic. An unload closes a topic on its broker; its
 * clients reconnect to whichever broker owns it next (on a cluster, perhaps another), and a
 * persistent subscription's unacked messages are redelivered. Two workers serve both services.
 * Passes when every request on the persistent topic is answered, with its own answer: the
 * agent takes the first final answer of each id, so it sees each answered exactly once. Answers
 * beyond the first on the wire are counted (a redelivered copy of one message is not): a
 * request the broker stored twice (`requestCopies`: a producer resending what was stored but
 * not confirmed when the topic closed) is answered twice, and so is a request whose ack was
 * lost in the unload and that the broker handed to the other worker (each worker remembers
 * only what it answered itself). The non-persistent loss is measured, never asserted.
 * Everything lives in a namespace of the drill's own (`tg/unload-drill-<random>`), so a shared
 * broker's other namespaces are never unloaded; on a cluster of the drill's own, in TrustGraph's
 * namespaces, where a secured cluster's roles have their grants (`namespaces`, `roles`).
 */
export async function unloadDrill(ctx: DrillContext, o: UnloadDrillOptions): Promise<DrillResult> {
  const started = Date.now();
  const brokers = o.brokers ?? [ctx.broker];
  const admin = adminOf(brokers[0]!);
  const run = `unload-drill-${randomBytes(4).toString('hex')}`;
  const own = o.namespaces === undefined ? `tg/${run}` : undefined;
  if (own !== undefined) await admin.createNamespace(own, ctx.signal);
  const ns = o.namespaces ?? { request: own!, response: own! };
  const namespaces = [...new Set([ns.request, ns.response])];
  const prefix = own === undefined ? `${run}-` : '';
  const persistent = topicsIn(ns, prefix, 'echo-p', true);
  const nonPersistent = topicsIn(ns, prefix, 'echo-np', false);
  const tools = [persistent, nonPersistent];
  const as = (b: BrokerEndpoints, token: string | undefined): BrokerEndpoints => (token === undefined ? b : { ...b, token });
  const workers: DrillWorker[] = [];
  const agents: Awaited<ReturnType<typeof transportFor>>[] = [];
  const lanes: DirectLanes[] = [];
  try {
    // What reads the request topic for the drill's count of stored copies: the agents' own transport, unless their role may not.
    const watcher = o.roles ? await transportFor(ctx.transport, brokers[0], ctx.log) : undefined;
    if (watcher) agents.push(watcher);
    for (let w = 0; w < (o.workers ?? 2); w++) {
      const worker = await DrillWorker.create({
        transport: ctx.transport,
        broker: as(brokers[w % brokers.length]!, o.roles?.workerToken),
        log: ctx.log,
        services: tools.map((t) => ({
          id: t.id,
          requestQueue: t.requestTopic,
          responseQueue: t.responseTopic,
          concurrency: 16,
          tools: [{ name: t.id, arguments: [{ name: 'text', type: 'string' }] }],
        })),
        env: { TOOLWIRE_NACK_DELAY_MS: '1000' },
      });
      workers.push(worker);
      await worker.start(ctx.signal);
    }
    // Agents on each broker in turn: one per kind here, the other kind on the next broker.
    for (const [i, t] of tools.entries()) {
      const agent = await transportFor(ctx.transport, as(brokers[(i + 1) % brokers.length]!, o.roles?.agentToken), ctx.log);
      agents.push(agent);
      const persistentTopic = t === persistent;
      lanes.push(
        await DirectLanes.start(
          agent,
          t,
          {
            lanes: o.agentsPerKind,
            waitMs: persistentTopic ? 600_000 : 3_000,
            paceMs: 50,
            watchRequests: persistentTopic,
            ...(watcher ? { watchWith: watcher } : {}),
          },
          ctx.signal,
        ),
      );
    }
    const [p, np] = lanes as [DirectLanes, DirectLanes];
    ctx.say(
      `unload: ${namespaces.join(' and ')} on ${brokers.map((b) => b.adminUrl).join(', ')}; ${o.rounds} rounds under ${o.agentsPerKind} agents per topic kind (${ctx.transport})`,
    );
    const flowing = async (more: number): Promise<void> => {
      const target = p.tally().answered + more;
      const deadline = Date.now() + 120_000;
      while (p.tally().answered < target && Date.now() < deadline) await sleep(100, undefined, { signal: ctx.signal });
    };
    await flowing(o.answersBetweenRounds);
    // Which broker owns each tool topic, looked up after every round: on a cluster, how often an unload moved one.
    const owners = new Map<string, string>();
    let ownerMoves = 0;
    const brokersSeen = new Set<string>();
    const lookOwners = async (): Promise<void> => {
      for (const t of tools) {
        for (const topic of [t.requestTopic, t.responseTopic]) {
          const owner = await ownerOf(admin, topic, ctx.signal);
          if (owner === undefined) continue;
          brokersSeen.add(owner);
          if (owners.has(topic) && owners.get(topic) !== owner) ownerMoves++;
          owners.set(topic, owner);
        }
      }
    };
    await lookOwners();
    let topicUnloads = 0;
    let namespaceUnloads = 0;
    const unloadFailures: string[] = [];
    const tryUnload = async (what: string, fn: () => Promise<void>): Promise<boolean> => {
      try {
        await fn();
        return true;
      } catch (err) {
        if (unloadFailures.length < 5) unloadFailures.push(`${what}: ${(err as Error).message}`);
        return false;
      }
    };
    for (let r = 1; r <= o.rounds; r++) {
      for (const t of tools) {
        for (const topic of [t.requestTopic, t.responseTopic]) if (await tryUnload(topic, () => admin.unloadTopic(topic, ctx.signal))) topicUnloads++;
      }
      await flowing(o.answersBetweenRounds);
      for (const n of namespaces) if (await tryUnload(n, () => admin.unloadNamespace(n, ctx.signal))) namespaceUnloads++;
      await flowing(o.answersBetweenRounds);
      await lookOwners();
      ctx.say(`unload: round ${r}/${o.rounds} done; persistent ${p.tally().answered} answered, non-persistent ${np.tally().answered}`);
    }
    await p.stop();
    await np.stop();
    await p.settle(120_000);
    const pt = p.tally();
    const npt = np.tally();
    const npLost = npt.sent - npt.answered;
    const stats = await Promise.all(workers.map((w) => w.stop()));
    const passed = pt.sent > 0 && pt.unanswered === 0 && pt.failed === 0 && topicUnloads > 0 && namespaceUnloads > 0;
    return drillResult(
      'unload',
      ctx.form,
      started,
      'every request on the persistent topic answered (its first answer its own) while every tool topic and the namespace are unloaded again and again; answers beyond the first on the wire and the non-persistent loss measured',
      passed,
      {
        rounds: o.rounds,
        topicUnloads,
        namespaceUnloads,
        persistentSent: pt.sent,
        persistentAnswered: pt.answered,
        persistentFailed: pt.failed,
        persistentUnanswered: pt.unanswered,
        persistentDuplicates: pt.duplicates,
        persistentRedeliveredCopies: pt.redelivered,
        persistentRequestCopies: pt.requestCopies,
        nonPersistentSent: npt.sent,
        nonPersistentAnswered: npt.answered,
        nonPersistentLost: npLost,
        nonPersistentErrors: npt.failed,
        workerNacked: stats.reduce((n, s) => n + (s?.nacked ?? 0), 0),
        ownerMoves,
        ownersSeen: brokersSeen.size,
      },
      { nonPersistentLossPct: npt.sent === 0 ? NaN : (100 * npLost) / npt.sent },
      [
        `${namespaces.length === 1 ? 'namespace' : 'namespaces'} ${namespaces.join(' and ')}; workers on ${workers.map((_, w) => brokers[w % brokers.length]!.adminUrl).join(' and ')}`,
        ...(o.roles ? ["workers and agents each on their own role's token"] : []),
        ...unloadFailures.map((f) => `unload failed: ${f}`),
        ...(pt.failed > 0 ? [`persistent errors: ${p.errors().join(' | ')}`] : []),
        ...(npt.failed > 0 ? [`non-persistent errors: ${np.errors().join(' | ')}`] : []),
      ],
    );
  } finally {
    for (const l of lanes) {
      await l.stop().catch(() => undefined);
      await l.close();
    }
    for (const w of workers) {
      await w.stop().catch(() => undefined);
      await w.remove();
    }
    for (const a of agents) await a.close().catch(() => undefined);
    const cancels = namespaces.map((n) => `non-persistent://${n}/toolwire-cancel`);
    for (const topic of [...tools.flatMap((t) => [t.requestTopic, t.responseTopic]), ...cancels]) await admin.deleteTopic(topic).catch(() => undefined);
    if (own !== undefined) await admin.deleteNamespace(own).catch(() => undefined);
  }
}

/** The broker serving `topic` now (its binary-protocol URL, TLS or not), from the lookup API; undefined if it cannot be told. */
async function ownerOf(admin: PulsarAdminClient, topic: string, signal: AbortSignal): Promise<string | undefined> {
  const found = await admin.lookupTopic(topic, signal).catch(() => undefined);
  return found?.brokerUrl ?? found?.brokerUrlTls;
}
