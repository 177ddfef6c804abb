import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { PulsarAdminClient } from '../../../src/pulsar/admin-client.js';
import { bootstrapTrustGraph } from '../../../src/pulsar/trustgraph-bootstrap.js';
import { waitForBroker } from '../../../src/pulsar/wait-for-broker.js';
import { PulsarAdminError } from '../../../src/pulsar/admin-error.js';
import { AbortedError } from '../../../src/errors.js';
import { FakeAdminServer, fakeAdminServerPerTest } from '../../fakes/fake-admin-server.js';

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('bootstrapTrustGraph', () => {
  const server = fakeAdminServerPerTest();

  it('creates tenant tg on the clusters the server() reports, then the four namespaces', async () => {
    server().clusters = ['standalone', 'other'];
    const report = await bootstrapTrustGraph(server().url);

    expect(server().tenants.get('tg')).toEqual({ adminRoles: [], allowedClusters: ['standalone', 'other'] });
    expect([...server().namespaces].sort()).toEqual(['tg/flow', 'tg/notify', 'tg/request', 'tg/response']);
    expect(report.tenantOutcome).toBe('created');
    expect(report.clusters).toEqual(['standalone', 'other']);
    expect(report.namespaces.map((n) => [n.namespace, n.outcome, n.retention])).toEqual([
      ['tg/flow', 'created', 'skipped'],
      ['tg/request', 'created', 'skipped'],
      ['tg/response', 'created', 'set'],
      ['tg/notify', 'created', 'set'],
    ]);
  });

  it('sets the short retention on response and notify only', async () => {
    await bootstrapTrustGraph(server().url);
    expect(Object.fromEntries(server().retention)).toEqual({
      'tg/response': { retentionTimeInMinutes: 3, retentionSizeInMB: -1 },
      'tg/notify': { retentionTimeInMinutes: 3, retentionSizeInMB: -1 },
    });
  });

  it('is idempotent: a second run finds everything and changes nothing', async () => {
    await bootstrapTrustGraph(server().url);
    const writesBefore = server().seen.filter((r) => r.method !== 'GET').length;
    const second = await bootstrapTrustGraph(server().url);

    expect(second.tenantOutcome).toBe('exists');
    expect(second.namespaces.every((n) => n.outcome === 'exists')).toBe(true);
    expect(second.namespaces.filter((n) => n.retention === 'kept').map((n) => n.namespace)).toEqual(['tg/response', 'tg/notify']);
    // Only the PUTs that answered 409; no retention POST.
    const writesAfter = server()
      .seen.filter((r) => r.method !== 'GET')
      .slice(writesBefore);
    expect(writesAfter.map((r) => r.method)).toEqual(['PUT', 'PUT', 'PUT', 'PUT', 'PUT']);
  });

  it('leaves an operator-chosen retention alone', async () => {
    server().tenants.set('tg', {});
    server().namespaces.add('tg/response');
    server().retention.set('tg/response', { retentionTimeInMinutes: 60, retentionSizeInMB: 100 });
    const report = await bootstrapTrustGraph(server().url);
    expect(server().retention.get('tg/response')).toEqual({ retentionTimeInMinutes: 60, retentionSizeInMB: 100 });
    expect(report.namespaces.find((n) => n.namespace === 'tg/response')?.retention).toBe('kept');
  });

  it('does not touch retention when asked not to', async () => {
    await bootstrapTrustGraph(server().url, { shortRetention: null });
    expect(server().retention.size).toBe(0);
    expect(server().seen.some((r) => r.path.endsWith('/retention'))).toBe(false);
  });

  it('sends the token as a bearer token on every call', async () => {
    await bootstrapTrustGraph(server().url, { token: 's3cret-token' });
    expect(server().seen.length).toBeGreaterThan(5);
    expect(new Set(server().seen.map((r) => r.authorization))).toEqual(new Set(['Bearer s3cret-token']));
  });

  it('fails when the server() reports no cluster', async () => {
    server().clusters = [];
    await expect(bootstrapTrustGraph(server().url)).rejects.toThrow(/reports no cluster/);
    expect(server().tenants.size).toBe(0);
  });

  it('reports a refused token as a non-retriable error with the status and the reason', async () => {
    server().override = (_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ reason: 'Authentication required' }));
      return true;
    };
    const err = await bootstrapTrustGraph(server().url, { token: 'wrong' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PulsarAdminError);
    const e = err as PulsarAdminError;
    expect(e.status).toBe(401);
    expect(e.retriable).toBe(false);
    expect(e.reason).toBe('Authentication required');
    expect(e.message).toMatch(
      /GET \/admin\/v2\/clusters .*HTTP 401: Authentication required \(not authenticated: check PULSAR_TOKEN, PULSAR_TOKEN_FILE or the PULSAR_OAUTH2_ settings\)/,
    );
    expect(e.message).not.toContain('wrong');
  });

  it('treats a 5xx answer as retriable', async () => {
    server().override = (_req, res) => {
      res.writeHead(503);
      res.end('starting');
      return true;
    };
    const err = (await bootstrapTrustGraph(server().url).catch((e: unknown) => e)) as PulsarAdminError;
    expect(err).toBeInstanceOf(PulsarAdminError);
    expect(err.status).toBe(503);
    expect(err.retriable).toBe(true);
  });
});

describe('PulsarAdminClient', () => {
  it('rejects an admin URL that is not http(s)', () => {
    expect(() => new PulsarAdminClient('pulsar://127.0.0.1:6650')).toThrow(PulsarAdminError);
    expect(() => new PulsarAdminClient('not a url')).toThrow(/not a URL/);
  });

  it('rejects names that would change the path', async () => {
    const client = new PulsarAdminClient('http://127.0.0.1:1');
    await expect(client.createNamespace('tg/../x')).rejects.toThrow(/not a namespace|not a valid/);
    await expect(client.createTenant('a/b', { adminRoles: [], allowedClusters: [] })).rejects.toThrow(/not a valid/);
  });

  it('says the broker cannot be reached, as a retriable error', async () => {
    const port = await closedPort();
    const err = (await new PulsarAdminClient(`http://127.0.0.1:${port}`).listClusters().catch((e: unknown) => e)) as PulsarAdminError;
    expect(err).toBeInstanceOf(PulsarAdminError);
    expect(err.retriable).toBe(true);
    expect(err.status).toBeUndefined();
    expect(err.message).toMatch(/cannot reach the broker \(ECONNREFUSED\)/);
  });

  describe('against something that answers in another shape', () => {
    const server = fakeAdminServerPerTest();

    it('names the call and the field when a reply is not what the admin API sends', async () => {
      server().override = (req, res) => {
        if (req.url?.endsWith('/stats')) res.end(JSON.stringify({ msgInCounter: 'many', subscriptions: {} }));
        else res.end('<html>proxy login</html>');
        return true;
      };
      const client = new PulsarAdminClient(server().url);
      const stats = (await client.topicStats('persistent://tg/flow/t').catch((e: unknown) => e)) as PulsarAdminError;
      expect(stats).toBeInstanceOf(PulsarAdminError);
      expect(stats.retriable).toBe(false);
      expect(stats.message).toMatch(/^GET \/admin\/v2\/persistent\/tg\/flow\/t\/stats answered an unexpected body at msgInCounter/);
      await expect(client.listClusters()).rejects.toThrow(/GET \/admin\/v2\/clusters answered an unexpected body .*proxy login/);
    });

    it('reads the parts of a stats reply it uses and ignores the rest', async () => {
      server().override = (_req, res) => {
        res.end(
          JSON.stringify({ msgInCounter: 3, bytesInCounter: 90, subscriptions: { s: { msgBacklog: 1, msgOutCounter: 2, consumers: [{}], extra: true } } }),
        );
        return true;
      };
      expect(await new PulsarAdminClient(server().url).topicStats('persistent://tg/flow/t')).toEqual({
        msgInCounter: 3,
        subscriptions: { s: { msgBacklog: 1, msgOutCounter: 2, consumers: [{}] } },
      });
    });
  });

  describe('against a broker that never answers', () => {
    // Holds every request open.
    const server = fakeAdminServerPerTest((s) => (s.override = () => true));

    it('gives up after its timeout', async () => {
      const err = (await new PulsarAdminClient(server().url, { timeoutMs: 150 }).listClusters().catch((e: unknown) => e)) as PulsarAdminError;
      expect(err).toBeInstanceOf(PulsarAdminError);
      expect(err.message).toMatch(/no answer within 150 ms/);
      expect(err.retriable).toBe(true);
    });

    it('stops when the caller aborts', async () => {
      const ac = new AbortController();
      const pending = new PulsarAdminClient(server().url, { timeoutMs: 60_000 }).listClusters(ac.signal);
      setTimeout(() => ac.abort(), 20);
      await expect(pending).rejects.toBeInstanceOf(AbortedError);
    });
  });
});

describe('waitForBroker', () => {
  it('keeps asking until the broker names a cluster', async () => {
    const broker = new FakeAdminServer();
    let calls = 0;
    broker.override = (_req, res) => {
      calls += 1;
      if (calls >= 3) return false;
      res.writeHead(503);
      res.end();
      return true;
    };
    await broker.start();
    try {
      await expect(waitForBroker(broker.url, { intervalMs: 10, waitMs: 5_000 })).resolves.toEqual(['standalone']);
      expect(calls).toBe(3);
    } finally {
      await broker.stop();
    }
  });

  it('gives up at once on a refusal that waiting cannot fix', async () => {
    const broker = new FakeAdminServer();
    broker.override = (_req, res) => {
      res.writeHead(403);
      res.end();
      return true;
    };
    await broker.start();
    try {
      const err = (await waitForBroker(broker.url, { intervalMs: 10, waitMs: 5_000 }).catch((e: unknown) => e)) as PulsarAdminError;
      expect(err).toBeInstanceOf(PulsarAdminError);
      expect(err.status).toBe(403);
      expect(broker.seen).toHaveLength(1);
    } finally {
      await broker.stop();
    }
  });

  it('fails with the last cause when the wait runs out', async () => {
    const port = await closedPort();
    await expect(waitForBroker(`http://127.0.0.1:${port}`, { intervalMs: 20, waitMs: 100 })).rejects.toThrow(/not ready within 100 ms: .*ECONNREFUSED/);
  });
});
