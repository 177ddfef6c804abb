import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';

// The cluster drill runs Pulsar with host networking: whatever a container listens on is a
// port of the host. Each listener must be bound to loopback, or a drill opens ZooKeeper and
// the brokers to the machine's network for its whole run.
interface Service {
  readonly network_mode?: string;
  readonly environment?: Record<string, string>;
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

  it('uses host networking for every server, so that the settings above are what binds', async () => {
    const all = await services();
    for (const name of Object.keys(LOOPBACK)) expect(all[name]?.network_mode, name).toBe('host');
  });
});
