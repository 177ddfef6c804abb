import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// The cluster drill runs Pulsar with host networking: whatever a container listens on is a
// port of the host. Each listener must be bound to loopback, or a drill opens ZooKeeper and
// the brokers to the machine's network for its whole run.
interface Service {
  readonly network_mode?: string;
  readonly environment?: Record<string, string>;
  readonly command?: string | readonly string[];
}

async function services(): Promise<Record<string, Service>> {
  const text = await readFile(new URL('../../../bench/drills/cluster/docker-compose.yml', import.meta.url), 'utf8');
  return (parse(text, { merge: true }) as { services: Record<string, Service> }).services;
}

/** The listener settings each server needs, as apply-config-from-env.py writes them into its .conf file. */
const LOOPBACK: Record<string, Record<string, string>> = {
  zookeeper: { PULSAR_PREFIX_clientPortAddress: '127.0.0.1', 'PULSAR_PREFIX_metricsProvider.httpHost': '127.0.0.1' },
  bookie: {
    PULSAR_PREFIX_listeningInterface: 'lo',
    allowLoopback: 'true',
    advertisedAddress: '127.0.0.1',
    PULSAR_PREFIX_prometheusStatsHttpAddress: '127.0.0.1',
  },
  'broker-1': { bindAddress: '127.0.0.1', bindAddresses: '' },
  'broker-2': { bindAddress: '127.0.0.1', bindAddresses: '' },
};

describe('the cluster drill compose file', () => {
  it('binds every listener of ZooKeeper, the bookie and the brokers to loopback', async () => {
    const all = await services();
    for (const [name, wanted] of Object.entries(LOOPBACK)) {
      const env = all[name]?.environment ?? {};
      for (const [key, value] of Object.entries(wanted)) expect(String(env[key] ?? ''), `${name}: ${key}`).toBe(value);
    }
  });

  it('serves each broker on its TLS ports only (bound by the same bindAddress), with authentication and authorization on', async () => {
    const all = await services();
    for (const name of ['broker-1', 'broker-2']) {
      const env = all[name]?.environment ?? {};
      expect([String(env['brokerServicePort']), String(env['webServicePort'])], name).toEqual(['', '']);
      expect(String(env['brokerServicePortTls'] ?? ''), name).toMatch(/^\d+$/);
      expect(String(env['webServicePortTls'] ?? ''), name).toMatch(/^\d+$/);
      expect([env['authenticationEnabled'], env['authorizationEnabled'], env['brokerClientTlsEnabled']], name).toEqual(['true', 'true', 'true']);
    }
  });

  it('starts each server under bash, which keeps the settings whose names have a dot (dash drops them)', async () => {
    const all = await services();
    for (const name of Object.keys(LOOPBACK)) {
      const dotted = Object.keys(all[name]?.environment ?? {}).filter((k) => k.includes('.'));
      if (dotted.length > 0) expect(all[name]?.command?.[0], `${name}: ${dotted.join(', ')}`).toBe('bash');
    }
  });

  it('uses host networking for every server, so that the settings above are what binds', async () => {
    const all = await services();
    for (const name of Object.keys(LOOPBACK)) expect(all[name]?.network_mode, name).toBe('host');
  });
});
