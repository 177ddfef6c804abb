/**
 * The broker's certificate as the worker checks it, against real TLS servers with a private
 * CA made for the test: the admin API (https) and the WebSocket API (wss) each trust it when
 * told to, and say in plain words what to fix when they do not.
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PulsarAdminClient } from '../../../src/pulsar/admin-client.js';
import { PulsarAdminError } from '../../../src/pulsar/admin-error.js';
import { brokerFetch } from '../../../src/pulsar/tls-fetch.js';
import { openBrokerAccess } from '../../../src/assembly/broker-access.js';
import { DEFAULT_BROKER_TLS, type BrokerTls } from '../../../src/transport/broker-tls.js';
import { PulsarWsConnection } from '../../../src/transport/pulsar-ws-connection.js';
import { TransportError } from '../../../src/errors.js';
import { makeTestPki, type PemFiles, type TestPki } from '../../support/test-pki.js';

const log = pino({ level: 'silent' });
let dir: string;
let pki: TestPki;

/** An https server answering the admin call and the WebSocket upgrade, with this certificate. */
async function serve(files: PemFiles, requireClientCert = false): Promise<{ url: string; peers: string[]; close: () => Promise<void> }> {
  const peers: string[] = [];
  const server: Server = createServer(
    {
      cert: await readFile(files.certFile),
      key: await readFile(files.keyFile),
      ca: await readFile(pki.caFile),
      requestCert: requireClientCert,
      rejectUnauthorized: requireClientCert,
    },
    (req, res) => {
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
      peers.push(String(peer.subject?.CN ?? ''));
      res.writeHead(200, { 'content-type': 'application/json' }).end('["standalone"]');
    },
  );
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('error', () => undefined));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    peers,
    close: () =>
      new Promise((resolve) => {
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const admin = async (url: string, tls: BrokerTls) => new PulsarAdminClient(url, { fetch: await brokerFetch(tls), timeoutMs: 5_000 });
/** Node's defaults plus the test's CA. */
let trusting: BrokerTls;

function wsConnection(url: string, tls: BrokerTls): Promise<PulsarWsConnection> {
  return openBrokerAccess({ token: undefined, tokenFile: undefined, oauth2: undefined, tls }, log).then(
    (access) =>
      new PulsarWsConnection({
        url: `${url.replace('https', 'wss')}/ws/v2/producer/persistent/tg/request/x`,
        role: 'producer',
        topic: 'persistent://tg/request/x',
        tls: access.wsTls,
        log,
        pingIntervalMs: 60_000,
        connectTimeoutMs: 3_000,
        handshakeTimeoutMs: 2_000,
        backoff: { initialDelayMs: 10, maxDelayMs: 50 },
        handlers: { onOpen: () => {}, onMessage: () => {}, onDown: () => {} },
      }),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwire-tls-'));
  pki = await makeTestPki(dir);
  trusting = { ...DEFAULT_BROKER_TLS, trustCertsFile: pki.caFile };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the broker's certificate", () => {
  it('is trusted on the admin API and the WebSocket API when its CA is named, and not otherwise', async () => {
    const server = await serve(pki.server);
    try {
      expect(await (await admin(server.url, trusting)).listClusters()).toEqual(['standalone']);
      const ws = await wsConnection(server.url, trusting);
      await ws.open();
      expect(ws.isOpen).toBe(true);
      await ws.close();

      const err = await (await admin(server.url, DEFAULT_BROKER_TLS)).listClusters().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PulsarAdminError);
      expect((err as PulsarAdminError).retriable).toBe(false);
      expect((err as Error).message).toMatch(
        /not signed by a trusted CA \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\): set PULSAR_TLS_TRUST_CERTS/,
      );

      const untrusted = await wsConnection(server.url, DEFAULT_BROKER_TLS);
      const wsErr = await untrusted.open().catch((e: unknown) => e);
      expect(wsErr).toBeInstanceOf(TransportError);
      expect((wsErr as TransportError).retriable).toBe(false);
      expect((wsErr as Error).message).toMatch(/not signed by a trusted CA .*PULSAR_TLS_TRUST_CERTS/);
    } finally {
      await server.close();
    }
  });

  it('must name the host dialled, unless hostname checks are turned off', async () => {
    const elsewhere = await pki.serverFor('elsewhere', 'DNS:broker.example');
    const server = await serve(elsewhere);
    try {
      const err = await (await admin(server.url, trusting)).listClusters().catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/does not name that host \(ERR_TLS_CERT_ALTNAME_INVALID\)/);
      const wsErr = await (await wsConnection(server.url, trusting)).open().catch((e: unknown) => e);
      expect((wsErr as Error).message).toMatch(/does not name that host/);

      const lax = { ...trusting, validateHostname: false };
      expect(await (await admin(server.url, lax)).listClusters()).toEqual(['standalone']);
    } finally {
      await server.close();
    }
  });

  it('shows a client certificate when one is set, to a server that asks for it', async () => {
    const server = await serve(pki.server, true);
    const mine = await pki.client('tw-worker');
    try {
      const withCert = { ...trusting, certFile: mine.certFile, keyFile: mine.keyFile };
      expect(await (await admin(server.url, withCert)).listClusters()).toEqual(['standalone']);
      expect(server.peers).toEqual(['tw-worker']);
      await expect((await admin(server.url, trusting)).listClusters()).rejects.toThrow(PulsarAdminError);
    } finally {
      await server.close();
    }
  });
});
