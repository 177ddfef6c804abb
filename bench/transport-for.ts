import { openBrokerAccess, type BrokerAccess } from '../src/assembly/broker-access.js';
import type { Logger } from 'pino';
import { createTransport } from '../src/assembly/create-transport.js';
import type { Transport } from '../src/transport/transport.js';
import { PulsarAdminClient, type PulsarAdminOptions } from '../src/pulsar/admin-client.js';
import { brokerFetch } from '../src/pulsar/tls-fetch.js';
import { DEFAULT_BROKER_TLS, type BrokerTls } from '../src/transport/broker-tls.js';

/** An admin client for the bench's topic chores on this broker. */
export function adminOf(broker: BrokerEndpoints): PulsarAdminClient {
  return new PulsarAdminClient(broker.adminUrl, adminOptionsOf(broker));
}

/** The admin options of this broker's role: its token, and a fetch that trusts its CA when it names one. */
export function adminOptionsOf(broker: BrokerEndpoints): Pick<PulsarAdminOptions, 'token' | 'fetch'> {
  if (broker.tlsTrustCertsFile === undefined) return { token: broker.token };
  // Made at the first call: brokerFetch is async.
  let made: Promise<typeof fetch> | undefined;
  const tls = tlsOf(broker);
  const fetchWithCa = (async (input: string, init?: RequestInit) => (await (made ??= brokerFetch(tls)))(input, init)) as typeof fetch;
  return { token: broker.token, fetch: fetchWithCa };
}

/** Where the bench and the drills find the broker, and how they are let in. */
export interface BrokerEndpoints {
  /** Binary protocol, `pulsar://host:6650` or `pulsar+ssl://host:6651` (the Python peer uses it). */
  readonly pulsarUrl: string;
  /** Web port, `http://host:8080` or `https://host:8443` (WebSocket API and admin REST). */
  readonly adminUrl: string;
  /** The token of the role that connects (PULSAR_TOKEN for a worker). */
  readonly token?: string;
  /** A PEM file of the CA that signed the broker's certificate (PULSAR_TLS_TRUST_CERTS). */
  readonly tlsTrustCertsFile?: string;
}

function tlsOf(broker: BrokerEndpoints): BrokerTls {
  return broker.tlsTrustCertsFile === undefined ? DEFAULT_BROKER_TLS : { ...DEFAULT_BROKER_TLS, trustCertsFile: broker.tlsTrustCertsFile };
}

/** The credentials and TLS of a client on this broker; undefined for an open one. */
function accessOf(broker: BrokerEndpoints, log: Logger): Promise<BrokerAccess> | undefined {
  if (broker.token === undefined && broker.tlsTrustCertsFile === undefined) return undefined;
  return openBrokerAccess({ token: broker.token, tokenFile: undefined, oauth2: undefined, tls: tlsOf(broker) }, log);
}

/** The environment a toolwire process needs to reach this broker as its role. */
export function brokerEnv(broker: BrokerEndpoints): Record<string, string> {
  return {
    PULSAR_URL: broker.pulsarUrl,
    PULSAR_ADMIN_URL: broker.adminUrl,
    ...(broker.token ? { PULSAR_TOKEN: broker.token } : {}),
    ...(broker.tlsTrustCertsFile ? { PULSAR_TLS_TRUST_CERTS: broker.tlsTrustCertsFile } : {}),
  };
}

export type BenchTransportKind = 'pulsar-ws' | 'pulsar' | 'memory';

/** A transport of the asked kind for the bench's and the drills' agents, patient through broker restarts. */
export async function transportFor(kind: BenchTransportKind, broker: BrokerEndpoints | undefined, log: Logger): Promise<Transport> {
  if (kind === 'memory') return createTransport({ kind: 'memory', log });
  const access = broker ? accessOf(broker, log) : undefined;
  return createTransport({
    kind,
    serviceUrl: broker?.pulsarUrl,
    adminUrl: broker?.adminUrl,
    ...(access ? { access: await access } : {}),
    log,
    // A broker restart takes tens of seconds on small machines: sends wait it out rather than fail.
    ws: { sendTimeoutMs: 180_000, connectTimeoutMs: 60_000 },
    native: { sendTimeoutMs: 180_000 },
  });
}
