/**
 * vitest globalSetup for the integration project: provide a real Pulsar broker, in this order
 *   (a) the one PULSAR_URL + PULSAR_ADMIN_URL name;
 *   (b) a testcontainers `apachepulsar/pulsar` container, when a Docker engine answers;
 *   (c) scripts/pulsar-broker.sh start (reuses a broker already answering on its ports).
 * If none can be had, the run fails and says why each way failed. Then it creates TrustGraph's
 * tenant `tg` and namespaces, and hands the URLs to the test files both as
 * `process.env.PULSAR_URL` / `PULSAR_ADMIN_URL` (the workers inherit the environment) and as
 * `inject('pulsarUrl')` / `inject('pulsarAdminUrl')`.
 *
 * Knobs: TOOLWIRE_TEST_TRANSPORT=pulsar-ws|pulsar picks the transport of the whole suite
 * (test/support/transport-under-test.ts); TOOLWIRE_TEST_BROKER=env|docker|script forces one way; TOOLWIRE_KEEP_BROKER=1 leaves a
 * broker this setup started running after the tests; PULSAR_ADMIN_TOKEN / PULSAR_TOKEN are sent
 * to the admin API.
 */
import type { TestProject } from 'vitest/node';
import { errorMessage } from '../../src/errors.js';
import { bootstrapTrustGraph } from '../../src/pulsar/trustgraph-bootstrap.js';
import { loadPulsarClient } from '../../src/transport/pulsar-native-client.js';
import { transportUnderTest } from '../support/transport-under-test.js';
import { brokerFromDocker, brokerFromEnv, brokerFromScript, probeDocker, type Broker } from './broker-sources.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pulsarUrl: string;
    pulsarAdminUrl: string;
  }
}

const DOCKER_PROBE_MS = 3_000;
/** Download (once, ~210 MB) plus start. */
const SCRIPT_LIMIT_MS = 20 * 60_000;

function say(line: string): void {
  process.stderr.write(`[broker] ${line}\n`);
}

async function obtainBroker(env: NodeJS.ProcessEnv): Promise<Broker> {
  const forced = env['TOOLWIRE_TEST_BROKER'];
  if (forced !== undefined && !['env', 'docker', 'script'].includes(forced)) {
    throw new Error(`TOOLWIRE_TEST_BROKER must be env, docker or script; got "${forced}"`);
  }
  const keep = env['TOOLWIRE_KEEP_BROKER'] === '1';
  const token = env['PULSAR_ADMIN_TOKEN'] || env['PULSAR_TOKEN'] || undefined;
  const why: string[] = [];

  if (!forced || forced === 'env') {
    try {
      const b = await brokerFromEnv(env, token);
      if (b) return b;
      why.push('(a) PULSAR_URL and PULSAR_ADMIN_URL are not set');
    } catch (err) {
      // A broker the user named but that does not answer is an error, not a cue to start another.
      throw new Error(`the broker named by the environment cannot be used: ${(err as Error).message}`, { cause: err });
    }
  }

  if (!forced || forced === 'docker') {
    const probe = await probeDocker(DOCKER_PROBE_MS);
    if ('host' in probe) {
      say(`a Docker engine answers; starting a container (host ${probe.host})`);
      try {
        return await brokerFromDocker(probe.host, keep);
      } catch (err) {
        why.push(`(b) Docker answered but the Pulsar container did not start: ${(err as Error).message}`);
      }
    } else {
      why.push(`(b) no Docker engine: ${probe.reason}`);
    }
  }

  if (!forced || forced === 'script') {
    say(why.length > 0 ? `${why.join('; ')}; trying scripts/pulsar-broker.sh start` : 'trying scripts/pulsar-broker.sh start');
    try {
      return await brokerFromScript(env, keep, AbortSignal.timeout(SCRIPT_LIMIT_MS));
    } catch (err) {
      why.push(`(c) ${(err as Error).message}`);
    }
  }

  throw new Error(
    `No Pulsar broker for the integration tests${forced ? ` (TOOLWIRE_TEST_BROKER=${forced})` : ''}:\n  ${why.join('\n  ')}\n` +
      'Set PULSAR_URL and PULSAR_ADMIN_URL to a running broker, start Docker, or fix scripts/pulsar-broker.sh (needs Java 17+ and Maven Central).',
  );
}

/**
 * Says which transport the suite runs on (TOOLWIRE_TEST_TRANSPORT), and loudly what does not
 * run here: the native client's own contract tests when pulsar-client does not load. Asking
 * for the native transport where it does not load is an error, not a quiet fallback.
 */
async function announceTransport(): Promise<void> {
  const kind = transportUnderTest();
  const native = await loadPulsarClient().then(
    () => undefined,
    (err: unknown) => errorMessage(err),
  );
  if (kind === 'pulsar' && native !== undefined) {
    throw new Error(`TOOLWIRE_TEST_TRANSPORT=pulsar, but the native client does not load here: ${native}`);
  }
  say(`the integration suite runs on the ${kind} transport (TOOLWIRE_TEST_TRANSPORT=pulsar-ws|pulsar)`);
  if (native !== undefined) {
    say('!! the native pulsar-client does not load here: its contract tests are SKIPPED and the suite cannot run on it');
  } else if (kind === 'pulsar-ws') {
    say('the native pulsar-client loads here: TOOLWIRE_TEST_TRANSPORT=pulsar runs the whole suite on it too');
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await announceTransport();
  const broker = await obtainBroker(process.env);
  say(`using ${broker.pulsarUrl} (admin ${broker.adminUrl}): ${broker.detail}`);
  try {
    const token = process.env['PULSAR_ADMIN_TOKEN'] || process.env['PULSAR_TOKEN'] || undefined;
    const report = await bootstrapTrustGraph(broker.adminUrl, { token, signal: AbortSignal.timeout(60_000) });
    say(`tenant ${report.tenant} ${report.tenantOutcome}; namespaces ${report.namespaces.map((n) => `${n.namespace} ${n.outcome}`).join(', ')}`);
  } catch (err) {
    await broker.stop().catch(() => undefined);
    throw new Error(`the broker at ${broker.adminUrl} is up but TrustGraph's tenant and namespaces could not be created: ${(err as Error).message}`, {
      cause: err,
    });
  }
  process.env['PULSAR_URL'] = broker.pulsarUrl;
  process.env['PULSAR_ADMIN_URL'] = broker.adminUrl;
  project.provide('pulsarUrl', broker.pulsarUrl);
  project.provide('pulsarAdminUrl', broker.adminUrl);

  return async () => {
    await broker.stop();
  };
}
