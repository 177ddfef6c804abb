import { startApp } from '../../src/assembly/app.js';
import { DEFAULT_CONFIG_QUEUES } from '../../src/config/trustgraph/config-wire.js';
import { ID_PROPERTY } from '../../src/envelope/properties.js';
import { loadSecrets } from '../../src/secrets.js';
import { readSettings } from '../../src/settings.js';
import { MemoryTransport } from '../../src/transport/memory-transport.js';
import { captureLogger } from '../support/harness.js';

/** Descriptors by config type, then by key, as TrustGraph's config service holds one workspace. */
export type ConfigItems = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

/**
 * TrustGraph's config service on the in-memory broker, as far as a worker reads it: every
 * `getvalues` is answered with the items of its type at version 1. Stops when the transport closes.
 */
export async function fakeConfigService(transport: MemoryTransport, items: ConfigItems): Promise<void> {
  const requests = await transport.subscribe({ topic: DEFAULT_CONFIG_QUEUES.request, subscription: 'config-service' });
  const answers = await transport.producer(DEFAULT_CONFIG_QUEUES.response);
  void (async () => {
    for await (const m of requests) {
      await m.ack();
      const { type } = JSON.parse(m.data.toString('utf8')) as { type?: string };
      const values = Object.entries(items[type ?? ''] ?? {}).map(([key, value]) => ({ type, key, value: JSON.stringify(value), workspace: '' }));
      await answers.send({ data: JSON.stringify({ version: 1, values, error: null }), properties: { [ID_PROPERTY]: m.properties[ID_PROPERTY]! } });
    }
  })();
}

/**
 * A worker on TrustGraph's config service (on the in-memory broker) whose workspace holds
 * `services`, started and stopped: the ids it served, and the problems of the config it refused.
 */
export async function remoteWorkerOutcome(
  services: readonly Record<string, unknown>[],
  env: Readonly<Record<string, string>>,
  secretsFile?: string,
): Promise<{ served: string[]; problems: readonly string[] }> {
  const transport = new MemoryTransport();
  await fakeConfigService(transport, { 'tool-service': Object.fromEntries(services.map((s) => [String(s['id']), s])) });
  const settings = readSettings({ TOOLWIRE_CONFIG_SOURCE: 'trustgraph', TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONFIG_POLL_MS: '0', ...env });
  const app = await startApp({ settings, transport, secrets: loadSecrets({ ...env }, secretsFile), log: captureLogger('fatal').log });
  try {
    return { served: app.worker.served().map((s) => s.id), problems: app.config().rejected?.problems ?? [] };
  } finally {
    await app.stop(0);
  }
}
