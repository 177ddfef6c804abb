import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import { TRUSTGRAPH_NAMESPACES, bootstrapTrustGraph } from '../../src/pulsar/trustgraph-bootstrap.js';
import { pulsarBootstrapCommand } from '../../src/cli/commands/pulsar-bootstrap.js';

const adminUrl = inject('pulsarAdminUrl');
const admin = new PulsarAdminClient(adminUrl);
// A tenant of our own, so that "created" can be observed on a broker others share.
const scratch = `tw-it-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  for (const ns of TRUSTGRAPH_NAMESPACES) await admin.deleteNamespace(`${scratch}/${ns}`);
  await admin.deleteTenant(scratch);
  expect(await admin.listTenants()).not.toContain(scratch);
});

describe('bootstrapTrustGraph against a real broker', () => {
  it('creates a tenant and its four namespaces, then finds them all on a second run', async () => {
    const clusters = await admin.listClusters();
    const first = await bootstrapTrustGraph(adminUrl, { tenant: scratch });
    expect(first.tenantOutcome).toBe('created');
    expect(first.namespaces.map((n) => [n.namespace, n.outcome, n.retention])).toEqual([
      [`${scratch}/flow`, 'created', 'skipped'],
      [`${scratch}/request`, 'created', 'skipped'],
      [`${scratch}/response`, 'created', 'set'],
      [`${scratch}/notify`, 'created', 'set'],
    ]);

    const second = await bootstrapTrustGraph(adminUrl, { tenant: scratch });
    expect(second.tenantOutcome).toBe('exists');
    expect(second.namespaces.map((n) => n.outcome)).toEqual(['exists', 'exists', 'exists', 'exists']);
    expect(second.namespaces.filter((n) => n.retention === 'kept')).toHaveLength(2);

    expect(await admin.getTenant(scratch)).toEqual({ adminRoles: [], allowedClusters: clusters });
    expect((await admin.listNamespaces(scratch)).sort()).toEqual(['flow', 'notify', 'request', 'response'].map((n) => `${scratch}/${n}`));
    expect(await admin.getRetention(`${scratch}/response`)).toEqual({ retentionTimeInMinutes: 3, retentionSizeInMB: -1 });
    expect(await admin.getRetention(`${scratch}/notify`)).toEqual({ retentionTimeInMinutes: 3, retentionSizeInMB: -1 });
    expect(await admin.getRetention(`${scratch}/flow`)).toEqual({ retentionTimeInMinutes: 0, retentionSizeInMB: 0 });
  });

  it('leaves tenant tg (made by the global setup) complete after running again', async () => {
    const report = await bootstrapTrustGraph(adminUrl);
    expect(report.tenantOutcome).toBe('exists');
    expect(report.namespaces.map((n) => n.outcome)).toEqual(['exists', 'exists', 'exists', 'exists']);
    const namespaces = await admin.listNamespaces('tg');
    for (const ns of TRUSTGRAPH_NAMESPACES) expect(namespaces).toContain(`tg/${ns}`);
  });

  it('runs as `toolwire pulsar bootstrap` and reports JSON', async () => {
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await pulsarBootstrapCommand.run({
      argv: ['--admin-url', adminUrl, '--tenant', scratch, '--json', '--wait', '10'],
      stdin: new PassThrough(),
      stdout,
      stderr: new PassThrough(),
      env: {},
      signal: AbortSignal.timeout(30_000),
    });
    expect(code).toBe(0);
    const report = JSON.parse(out) as { tenant: string; tenantOutcome: string };
    expect(report).toMatchObject({ tenant: scratch, tenantOutcome: 'exists' });
  });
});

describe('the admin client topic chores against a real broker', () => {
  it('creates a subscription at earliest once, reports it in the stats, and deletes the topic', async () => {
    const topic = `persistent://tg/flow/tw-admin-${randomBytes(4).toString('hex')}`;
    expect(await admin.topicStats(topic)).toBeUndefined();
    expect(await admin.createSubscriptionAtEarliest(topic, 'first')).toBe('created');
    expect(await admin.createSubscriptionAtEarliest(topic, 'first')).toBe('exists');
    const stats = await admin.topicStats(topic);
    expect(Object.keys(stats?.subscriptions ?? {})).toEqual(['first']);
    await admin.deleteTopic(topic);
    expect(await admin.topicStats(topic)).toBeUndefined();
    // Deleting what is already gone counts as done.
    await expect(admin.deleteTopic(topic)).resolves.toBeUndefined();
    expect(await admin.brokerVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
