import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitForBroker } from '../../src/pulsar/wait-for-broker.js';
import { REPO_ROOT, TOOLWIRE_BIN } from '../child-process.js';
import { PulsarAdminError } from '../../src/pulsar/admin-error.js';
import { adminOf, adminOptionsOf, brokerEnv, type BrokerEndpoints } from '../transport-for.js';
import { CLUSTER_ROLES, makeClusterSecrets } from './cluster-secrets.js';
import type { DrillContext } from './drill-context.js';
import type { DrillResult } from './drill-result.js';
import { unloadDrill, type UnloadDrillOptions } from './unload-drill.js';

const run = promisify(execFile);
const COMPOSE_FILE = join(REPO_ROOT, 'bench', 'drills', 'cluster', 'docker-compose.yml');

/** The two brokers of bench/drills/cluster/docker-compose.yml, as the host reaches them: TLS only. */
export const CLUSTER_BROKERS: readonly BrokerEndpoints[] = [
  { pulsarUrl: 'pulsar+ssl://127.0.0.1:6661', adminUrl: 'https://127.0.0.1:8091' },
  { pulsarUrl: 'pulsar+ssl://127.0.0.1:6662', adminUrl: 'https://127.0.0.1:8092' },
];

export const CLUSTER_DRILL = {
  short: { rounds: 5, agentsPerKind: 2, answersBetweenRounds: 20 },
  long: { rounds: 20, agentsPerKind: 4, answersBetweenRounds: 50 },
} as const;

/**
 * The unload drill on a real cluster (two brokers, one bookie, ZooKeeper; Docker compose):
 * workers and agents spread over both brokers' WebSocket services, so an unload moves a topic
 * between owners and the service proxying a client follows it. The brokers are secured as in
 * production: TLS with a CA made for the run, tokens, authorization. The workers connect with a
 * worker role's token and the agents with an agent role's, each granted by `toolwire pulsar
 * bootstrap` (as an operator would); the drill's own calls use the superuser's. Makes the keys,
 * starts the stack, runs the drill on TrustGraph's tg/request and tg/response, takes the stack
 * down. Needs a Docker engine and the apachepulsar/pulsar:3.3.6 image (scripts/containers-ci.sh
 * shows how both are had here) and the openssl command.
 */
export async function clusterDrill(ctx: DrillContext, o: Omit<UnloadDrillOptions, 'brokers' | 'roles' | 'namespaces'>): Promise<DrillResult> {
  // `docker compose` (the v2 plugin) where it exists, else Debian's docker-compose 1.29.
  const [cmd, ...pre] = await run('docker', ['compose', 'version']).then(
    () => ['docker', 'compose'],
    () => ['docker-compose'],
  );
  const secrets = await makeClusterSecrets();
  const compose = (...args: string[]) =>
    run(cmd!, [...pre, '-f', COMPOSE_FILE, '-p', 'toolwire-drill-cluster', ...args], {
      signal: ctx.signal,
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, TOOLWIRE_CLUSTER_SECRETS: secrets.brokerDir },
    });
  // The drill's own calls (readiness, the bootstrap, unloads, lookups) as the superuser.
  const brokers = CLUSTER_BROKERS.map((b) => ({ ...b, token: secrets.tokens.admin, tlsTrustCertsFile: secrets.caFile }));
  try {
    ctx.say(`cluster: ${[cmd, ...pre].join(' ')} up (${COMPOSE_FILE}; TLS, tokens, authorization)`);
    await compose('up', '-d');
    // Four JVMs on a small machine: minutes, not seconds.
    for (const b of brokers) await waitForBroker(b.adminUrl, { ...adminOptionsOf(b), signal: ctx.signal, waitMs: 600_000 });
    const granted = await bootstrapWithRoles(brokers[0]!, ctx.signal);
    ctx.say(`cluster: toolwire pulsar bootstrap granted ${granted.join('; ')}`);
    const refusals = await refusedAsExpected(brokers[1]!, secrets.tokens.agent, ctx.signal);
    const r = await unloadDrill(ctx, {
      ...o,
      brokers,
      roles: { workerToken: secrets.tokens.worker, agentToken: secrets.tokens.agent },
      namespaces: { request: 'tg/request', response: 'tg/response' },
    });
    return {
      ...r,
      drill: 'cluster',
      notes: [
        'two brokers, one bookie, ZooKeeper (bench/drills/cluster/docker-compose.yml)',
        `secured: TLS only on both broker ports (a CA made for the run), RS256 tokens, authorization; roles ${CLUSTER_ROLES.worker} and ${CLUSTER_ROLES.agent} granted by toolwire pulsar bootstrap, ${CLUSTER_ROLES.admin} the superuser`,
        refusals,
        ...r.notes,
      ],
    };
  } finally {
    await compose('down', '-v').catch((err: unknown) => ctx.say(`cluster: docker compose down failed: ${(err as Error).message}`));
    await secrets.remove();
  }
}

/**
 * That the cluster is as secured as the drill says, before it counts anything: a call with no
 * token is refused; the agent's role is let in to look up a request topic (its token is good)
 * and refused a subscription on it (Pulsar answers an authorization refusal with 401 or 403).
 */
async function refusedAsExpected(broker: BrokerEndpoints, agentToken: string, signal: AbortSignal): Promise<string> {
  const outcome = (call: Promise<unknown>) =>
    call.then(
      () => ({ status: 0, said: 'let in' }),
      (err: unknown) => ({
        status: err instanceof PulsarAdminError ? (err.status ?? -1) : -1,
        said: err instanceof PulsarAdminError && err.status !== undefined ? `HTTP ${err.status} (${brokerSaid(err.reason)})` : String(err),
      }),
    );
  const topic = 'persistent://tg/request/cluster-drill-probe';
  const agent = adminOf({ ...broker, token: agentToken });
  const anonymous = await outcome(adminOf({ ...broker, token: undefined }).listClusters(signal));
  const agentLooks = await outcome(agent.lookupTopic(topic, signal));
  const agentReads = await outcome(agent.createSubscriptionAtEarliest(topic, 'probe', signal));
  const said = `a call with no token: ${anonymous.said}; the agent's role looking up ${topic}: ${agentLooks.said}; subscribing to it: ${agentReads.said}`;
  if (anonymous.status !== 401 || agentLooks.status !== 0 || (agentReads.status !== 401 && agentReads.status !== 403)) {
    throw new Error(`the cluster is not secured as the drill expects (${said})`);
  }
  return `as expected on ${broker.adminUrl}, ${said}`;
}

/** The broker's words: its reason, or the message of the JSON error page its web server writes. */
function brokerSaid(reason: string | undefined): string {
  return (/"message"\s*:\s*"([^"]*)"/.exec(reason ?? '')?.[1] ?? reason ?? '').trim();
}

/**
 * TrustGraph's tenant and namespaces, and the worker's and the agent's grants, made by the
 * real command an operator runs (`toolwire pulsar bootstrap`), over https with the superuser's
 * token; returns its grant lines.
 */
async function bootstrapWithRoles(admin: BrokerEndpoints, signal: AbortSignal): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    [TOOLWIRE_BIN, 'pulsar', 'bootstrap', '--admin-url', admin.adminUrl, '--worker-role', CLUSTER_ROLES.worker, '--agent-role', CLUSTER_ROLES.agent],
    { signal, env: { ...process.env, ...brokerEnv(admin), PULSAR_ADMIN_TOKEN: admin.token ?? '' } },
  );
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('granted '))
    .map((l) => l.replace(/^granted /, '').replace(/:.*$/, ''));
}
