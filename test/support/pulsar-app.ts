/**
 * Helpers for tests against a real broker: descriptors written to a temp config dir, a
 * pulsar-ws transport, a toolwire app (startApp) on it, and waiting on what the broker shows.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { startApp, type App } from '../../src/assembly/app.js';
import { defaultRegistry } from '../../src/plugins/default-registry.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import { PulsarAdminClient, type TopicStats } from '../../src/pulsar/admin-client.js';
import { loadSecrets } from '../../src/secrets.js';
import { readSettings } from '../../src/settings.js';
import { createTransport, type PulsarWsOptions } from '../../src/assembly/create-transport.js';
import type { Transport } from '../../src/transport/transport.js';
import type { WorkerLimits } from '../../src/worker/limits.js';
import { TEST_TRANSPORT } from './transport-under-test.js';

/** A short random suffix for topic and service names, so that tests on a shared broker never meet. */
export function suffix(): string {
  return randomBytes(4).toString('hex');
}

export interface Descriptors {
  readonly services?: readonly Record<string, unknown>[];
  /** Each needs a `name`; written as tool/<name>.json. */
  readonly tools?: readonly Record<string, unknown>[];
}

/** A fresh temp dir holding tool-service/<id>.json and tool/<name>.json; remove it with removeDir. */
export async function writeConfigDir(d: Descriptors): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-it-'));
  await mkdir(join(dir, 'tool-service'));
  await mkdir(join(dir, 'tool'));
  for (const s of d.services ?? []) await writeFile(join(dir, 'tool-service', `${String(s['id'])}.json`), JSON.stringify(s, null, 2));
  for (const t of d.tools ?? []) await writeFile(join(dir, 'tool', `${String(t['name'])}.json`), JSON.stringify(t, null, 2));
  return dir;
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/**
 * An agent's (or worker's) transport on the broker, of the kind the suite runs on
 * (TOOLWIRE_TEST_TRANSPORT). `ws.sendTimeoutMs` applies to either kind.
 */
export function brokerTransport(adminUrl: string, log: Logger, ws: PulsarWsOptions = {}, pulsarUrl = process.env['PULSAR_URL']): Promise<Transport> {
  if (TEST_TRANSPORT === 'pulsar') {
    return createTransport({
      kind: 'pulsar',
      adminUrl,
      serviceUrl: pulsarUrl,
      log,
      ...(ws.sendTimeoutMs !== undefined ? { native: { sendTimeoutMs: ws.sendTimeoutMs } } : {}),
    });
  }
  return createTransport({ kind: 'pulsar-ws', adminUrl, log, ws: { connectTimeoutMs: 15_000, ...ws } });
}

export interface PulsarAppOptions {
  readonly adminUrl: string;
  /** The binary protocol's URL, for the native transport; default $PULSAR_URL. */
  readonly pulsarUrl?: string;
  readonly configDir: string;
  readonly log: Logger;
  /** Default: the plugins that ship with toolwire. */
  readonly registry?: PluginRegistry;
  readonly limits?: Partial<WorkerLimits>;
  readonly ws?: PulsarWsOptions;
  /** More settings, as environment variables (TOOLWIRE_CONFIG_SOURCE...). */
  readonly env?: Readonly<Record<string, string>>;
  /** The environment secret references resolve from (env:NAME). */
  readonly secretEnv?: Readonly<Record<string, string>>;
}

/** The worker process's app (no HTTP surface) on the suite's transport; app.stop() closes the transport. */
export async function startPulsarApp(o: PulsarAppOptions): Promise<App> {
  const env = {
    TOOLWIRE_CONFIG_DIR: o.configDir,
    TOOLWIRE_HTTP_PORT: 'off',
    TOOLWIRE_TRANSPORT: TEST_TRANSPORT,
    PULSAR_ADMIN_URL: o.adminUrl,
    ...((o.pulsarUrl ?? process.env['PULSAR_URL']) ? { PULSAR_URL: o.pulsarUrl ?? process.env['PULSAR_URL']! } : {}),
    ...o.env,
  };
  // What the registry's kinds read of env, as a worker's composition root passes it.
  const kinds = (o.registry ?? defaultRegistry()).declaredSettings();
  const base = readSettings(env, {}, kinds);
  const settings = readSettings(env, { limits: { ...base.limits, shutdownGraceMs: 5_000, ...o.limits } }, kinds);
  const transport = await brokerTransport(o.adminUrl, o.log, o.ws, o.pulsarUrl);
  try {
    return await startApp({ settings, transport, secrets: loadSecrets({ ...o.secretEnv }), log: o.log, ...(o.registry ? { registry: o.registry } : {}) });
  } catch (err) {
    await transport.close();
    throw err;
  }
}

/** Poll until `check` returns true; throws naming `what` (and the last error `check` threw) after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, intervalMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A topic's subscriptions as the admin API reports them ({} when the topic does not exist yet). */
export async function topicSubscriptions(adminUrl: string, topic: string): Promise<NonNullable<TopicStats['subscriptions']>> {
  return (await new PulsarAdminClient(adminUrl).topicStats(topic))?.subscriptions ?? {};
}

/** Delete a topic and its subscriptions (force), so a test leaves no durable cursor behind. */
export async function deleteTopic(adminUrl: string, topic: string): Promise<void> {
  await new PulsarAdminClient(adminUrl).deleteTopic(topic);
}
