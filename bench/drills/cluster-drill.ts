import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bootstrapTrustGraph } from '../../src/pulsar/trustgraph-bootstrap.js';
import { waitForBroker } from '../../src/pulsar/wait-for-broker.js';
import { REPO_ROOT } from '../child-process.js';
import type { BrokerEndpoints } from '../transport-for.js';
import type { DrillContext } from './drill-context.js';
import type { DrillResult } from './drill-result.js';
import { unloadDrill, type UnloadDrillOptions } from './unload-drill.js';

const run = promisify(execFile);
const COMPOSE_FILE = join(REPO_ROOT, 'bench', 'drills', 'cluster', 'docker-compose.yml');

/** The two brokers of bench/drills/cluster/docker-compose.yml, as the host reaches them. */
export const CLUSTER_BROKERS: readonly BrokerEndpoints[] = [
  { pulsarUrl: 'pulsar://127.0.0.1:6661', adminUrl: 'http://127.0.0.1:8091' },
  { pulsarUrl: 'pulsar://127.0.0.1:6662', adminUrl: 'http://127.0.0.1:8092' },
];

export const CLUSTER_DRILL = {
  short: { rounds: 5, agentsPerKind: 2, answersBetweenRounds: 20 },
  long: { rounds: 20, agentsPerKind: 4, answersBetweenRounds: 50 },
} as const;

/**
 * The unload drill on a real cluster (two brokers, one bookie, ZooKeeper; Docker compose):
 * workers and agents spread over both brokers' WebSocket services, so an unload moves a topic
 * between owners and the service proxying a client follows it. Starts the stack, runs the
 * drill, takes the stack down. Needs a Docker engine and the apachepulsar/pulsar:3.3.6 image
 * (scripts/containers-ci.sh shows how both are had here).
 */
export async function clusterDrill(ctx: DrillContext, o: Omit<UnloadDrillOptions, 'brokers'>): Promise<DrillResult> {
  // `docker compose` (the v2 plugin) where it exists, else Debian's docker-compose 1.29.
  const [cmd, ...pre] = await run('docker', ['compose', 'version']).then(
    () => ['docker', 'compose'],
    () => ['docker-compose'],
  );
  const compose = (...args: string[]) =>
    run(cmd!, [...pre, '-f', COMPOSE_FILE, '-p', 'toolwire-drill-cluster', ...args], { signal: ctx.signal, maxBuffer: 16 * 1024 * 1024 });
  ctx.say(`cluster: ${[cmd, ...pre].join(' ')} up (${COMPOSE_FILE})`);
  await compose('up', '-d');
  try {
    // Four JVMs on a small machine: minutes, not seconds.
    for (const b of CLUSTER_BROKERS) await waitForBroker(b.adminUrl, { signal: ctx.signal, waitMs: 600_000 });
    await bootstrapTrustGraph(CLUSTER_BROKERS[0]!.adminUrl, { signal: ctx.signal });
    const r = await unloadDrill(ctx, { ...o, brokers: CLUSTER_BROKERS });
    return { ...r, drill: 'cluster', notes: ['two brokers, one bookie, ZooKeeper (bench/drills/cluster/docker-compose.yml)', ...r.notes] };
  } finally {
    await compose('down', '-v').catch((err: unknown) => ctx.say(`cluster: docker compose down failed: ${(err as Error).message}`));
  }
}
