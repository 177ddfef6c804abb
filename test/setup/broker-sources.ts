/**
 * The three ways the integration tests can get a Pulsar broker: one the environment names,
 * a testcontainers `apachepulsar/pulsar` container when a Docker engine answers, or the
 * standalone distribution through scripts/pulsar-broker.sh.
 */
import { spawn } from 'node:child_process';
import { freePort } from '../../bench/free-port.js';
import { fileURLToPath } from 'node:url';
import { waitForBroker } from '../../src/pulsar/wait-for-broker.js';

export interface Broker {
  readonly source: 'env' | 'docker' | 'script';
  readonly pulsarUrl: string;
  readonly adminUrl: string;
  /** What it took to get it, for the log line. */
  readonly detail: string;
  /** Stop what this setup started; a no-op for a broker it found running. */
  stop(): Promise<void>;
}

export const PULSAR_IMAGE = 'apachepulsar/pulsar:3.3.6';
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BROKER_SCRIPT = fileURLToPath(new URL('../../scripts/pulsar-broker.sh', import.meta.url));

/** (a) `PULSAR_URL` + `PULSAR_ADMIN_URL`. Undefined when neither is set; throws when only one is, or it does not answer. */
export async function brokerFromEnv(env: NodeJS.ProcessEnv, token: string | undefined): Promise<Broker | undefined> {
  const pulsarUrl = env['PULSAR_URL'];
  const adminUrl = env['PULSAR_ADMIN_URL'];
  if (!pulsarUrl && !adminUrl) return undefined;
  if (!pulsarUrl || !adminUrl) {
    throw new Error(
      `PULSAR_URL and PULSAR_ADMIN_URL must be set together (got PULSAR_URL=${pulsarUrl ?? '<unset>'}, PULSAR_ADMIN_URL=${adminUrl ?? '<unset>'})`,
    );
  }
  await waitForBroker(adminUrl, { token, waitMs: 30_000, intervalMs: 1_000, timeoutMs: 5_000 });
  return { source: 'env', pulsarUrl, adminUrl, detail: 'named by PULSAR_URL/PULSAR_ADMIN_URL', stop: async () => {} };
}

/**
 * Ask testcontainers whether a container runtime answers, within `timeoutMs`. Returns the
 * runtime's host on success, or the reason it is not usable.
 */
export async function probeDocker(timeoutMs: number): Promise<{ host: string } | { reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const client = await Promise.race([getContainerRuntimeClient(), timeout]);
    return { host: client.info.containerRuntime.host };
  } catch (err) {
    return { reason: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * (b) A Pulsar standalone container. The broker listens inside the container on the same port
 * numbers it is published on, and advertises the runtime's host, so that the binary
 * protocol's topic lookup (which hands clients the advertised address and port) works from
 * here; the WebSocket API needs only the web port.
 */
export async function brokerFromDocker(host: string, keep: boolean): Promise<Broker> {
  // testcontainers' reaper (the ryuk image) cannot be pulled where no registry answers, and
  // this setup stops its container itself; say TESTCONTAINERS_RYUK_DISABLED=false to have it.
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  const { GenericContainer, Wait } = await import('testcontainers');
  const brokerPort = await freePort();
  const webPort = await freePort();
  const script = [
    'set -e',
    'cp conf/standalone.conf /tmp/standalone.conf',
    // The last two as in scripts/pulsar-broker.sh: new entries handed to a caught-up consumer at
    // once, and a lone journal entry written without waiting for company.
    `printf '\\nbrokerServicePort=${brokerPort}\\nwebServicePort=${webPort}\\nadvertisedAddress=${host}\\nmanagedLedgerNewEntriesCheckDelayInMillis=0\\njournalFlushWhenQueueEmpty=true\\n' >> /tmp/standalone.conf`,
    'export PULSAR_STANDALONE_CONF=/tmp/standalone.conf',
    'exec bin/pulsar standalone -nfw -nss',
  ].join('\n');
  const started = Date.now();
  const container = await new GenericContainer(PULSAR_IMAGE)
    .withEntrypoint(['sh', '-c'])
    .withCommand([script])
    .withEnvironment({ PULSAR_MEM: '-Xms256m -Xmx1g -XX:MaxDirectMemorySize=512m', PULSAR_GC: '-XX:+UseG1GC' })
    .withExposedPorts({ container: brokerPort, host: brokerPort }, { container: webPort, host: webPort })
    .withWaitStrategy(Wait.forHttp('/admin/v2/clusters', webPort).forStatusCode(200))
    .withStartupTimeout(180_000)
    .start();
  const adminUrl = `http://${host}:${webPort}`;
  // The web port answers a moment before standalone has registered its cluster.
  await waitForBroker(adminUrl, { waitMs: 60_000, intervalMs: 500 });
  return {
    source: 'docker',
    pulsarUrl: `pulsar://${host}:${brokerPort}`,
    adminUrl,
    detail: `container ${container.getId().slice(0, 12)} from ${PULSAR_IMAGE}, ready in ${Math.round((Date.now() - started) / 1000)} s`,
    stop: async () => {
      // The reaper removes it when this process exits anyway; keeping it only spares the wait.
      if (!keep) await container.stop();
    },
  };
}

interface ScriptRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderrTail: string;
}

function runScript(args: readonly string[], env: NodeJS.ProcessEnv, signal: AbortSignal, echo: boolean): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BROKER_SCRIPT, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], signal });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr = (stderr + c).slice(-4000);
      if (echo) process.stderr.write(c);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderrTail: stderr.trim().split('\n').slice(-15).join('\n') }));
  });
}

/**
 * (c) scripts/pulsar-broker.sh start: reuses a broker already answering on its ports, or
 * fetches (once) and starts one. Stops it at teardown only if it started it here, and not
 * when `keep` is set.
 */
export async function brokerFromScript(env: NodeJS.ProcessEnv, keep: boolean, signal: AbortSignal): Promise<Broker> {
  const started = Date.now();
  const run = await runScript(['start'], env, signal, true);
  const line = run.stdout.trim().split('\n').pop() ?? '';
  const m = /^(started|reused) (pulsar:\/\/\S+) (http:\/\/\S+)$/.exec(line);
  if (run.code !== 0 || !m) {
    throw new Error(`scripts/pulsar-broker.sh start exited with ${run.code}${line ? ` (stdout: ${line})` : ''}:\n${run.stderrTail}`);
  }
  const [, how, pulsarUrl, adminUrl] = m as unknown as [string, 'started' | 'reused', string, string];
  const seconds = Math.round((Date.now() - started) / 1000);
  return {
    source: 'script',
    pulsarUrl,
    adminUrl,
    detail:
      how === 'started'
        ? `started by scripts/pulsar-broker.sh in ${seconds} s${keep ? ', kept running after the tests (TOOLWIRE_KEEP_BROKER=1)' : ', stopped after the tests'}`
        : 'already running (reused by scripts/pulsar-broker.sh; left running)',
    stop: async () => {
      if (how !== 'started' || keep) return;
      const stop = await runScript(['stop'], env, AbortSignal.timeout(90_000), false);
      if (stop.code !== 0) throw new Error(`scripts/pulsar-broker.sh stop exited with ${stop.code}:\n${stop.stderrTail}`);
    },
  };
}
