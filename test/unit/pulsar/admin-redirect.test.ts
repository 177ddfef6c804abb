import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PulsarAdminClient } from '../../../src/pulsar/admin-client.js';
import { PulsarAdminError } from '../../../src/pulsar/admin-error.js';
import { FakeAdminServer } from '../../fakes/fake-admin-server.js';

// On a cluster, a broker answers an admin call about a topic another broker owns with a 307 to
// that broker. fetch would follow it without the Authorization header (another port is
// another origin), and a secured cluster would answer 401.
describe('PulsarAdminClient redirects', () => {
  let asked: FakeAdminServer;
  let owner: FakeAdminServer;
  beforeEach(async () => {
    asked = new FakeAdminServer();
    owner = new FakeAdminServer();
    await asked.start();
    await owner.start();
  });
  afterEach(async () => {
    await asked.stop();
    await owner.stop();
  });

  it("follows a broker's 307 to the topic's owner with the token, the method and the body", async () => {
    asked.override = (req, res) => {
      res.writeHead(307, { location: `${owner.url}${req.url ?? '/'}` });
      res.end();
      return true;
    };
    owner.override = (_req, res) => {
      res.writeHead(204);
      res.end();
      return true;
    };
    const client = new PulsarAdminClient(asked.url, { token: 'drill-token' });

    await expect(client.createSubscriptionAtEarliest('persistent://tg/request/echo', 'workers')).resolves.toBe('created');

    expect(asked.seen).toHaveLength(1);
    expect(owner.seen).toEqual([
      {
        method: 'PUT',
        path: '/admin/v2/persistent/tg/request/echo/subscription/workers',
        authorization: 'Bearer drill-token',
        body: JSON.stringify({ ledgerId: -1, entryId: -1, partitionIndex: -1 }),
      },
    ]);
  });

  it('refuses a redirect from https to http, where the token would travel in clear', async () => {
    const urls: string[] = [];
    const fetchStub = (async (input: string) => {
      urls.push(input);
      return new Response(null, { status: 307, headers: { location: 'http://127.0.0.1:8080/admin/v2/clusters' } });
    }) as typeof fetch;
    const client = new PulsarAdminClient('https://broker-1.example:8443', { token: 't', fetch: fetchStub });

    const err = await client.listClusters().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PulsarAdminError);
    expect((err as PulsarAdminError).message).toMatch(/refused a redirect from https to http:\/\/127\.0\.0\.1:8080/);
    expect((err as PulsarAdminError).retriable).toBe(false);
    expect(urls).toEqual(['https://broker-1.example:8443/admin/v2/clusters']);
  });

  it('gives up after five redirects', async () => {
    let calls = 0;
    const fetchStub = (async () => {
      calls++;
      return new Response(null, { status: 307, headers: { location: `/admin/v2/clusters?hop=${calls}` } });
    }) as typeof fetch;
    const client = new PulsarAdminClient('http://127.0.0.1:1', { fetch: fetchStub });

    await expect(client.listClusters()).rejects.toThrow(/more than 5 redirects/);
    expect(calls).toBe(6);
  });
});
