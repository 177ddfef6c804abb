import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

// Every broker the project starts is set for request/response traffic the same way
// (docs/benchmarks.md, "Latency of one call"): the script, the compose file and the
// testcontainers setup.
const SETTINGS = ['managedLedgerNewEntriesCheckDelayInMillis', 'journalFlushWhenQueueEmpty'];
const read = (path: string) => readFile(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe('the latency settings of the brokers we start', () => {
  it('are in the broker script', async () => {
    const script = await read('scripts/pulsar-broker.sh');
    expect(script).toContain('echo "managedLedgerNewEntriesCheckDelayInMillis=0"');
    expect(script).toContain('echo "journalFlushWhenQueueEmpty=true"');
  });

  it('are in the compose file (an unknown key needs the PULSAR_PREFIX_ form to be added)', async () => {
    const compose = await read('docker-compose.yml');
    expect(compose).toMatch(/^\s+managedLedgerNewEntriesCheckDelayInMillis: "0"$/m);
    expect(compose).toMatch(/^\s+PULSAR_PREFIX_journalFlushWhenQueueEmpty: "true"$/m);
  });

  it('are in the testcontainers setup', async () => {
    const setup = await read('test/setup/broker-sources.ts');
    for (const key of SETTINGS) expect(setup).toMatch(new RegExp(`\\\\\\\\n${key}=(0|true)`));
  });
});
