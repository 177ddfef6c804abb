import { tokenAccess } from '../src/assembly/broker-access.js';
import type { Logger } from 'pino';
import { createTransport } from '../src/assembly/create-transport.js';
import type { Transport } from '../src/transport/transport.js';
import { PulsarAdminClient } from '../src/pulsar/admin-client.js';

/** Where the bench and the drills find the broker. */
/** An admin client for the bench's topic chores on this broker. */
export function adminOf(broker: BrokerEndpoints): PulsarAdminClient {
  return new PulsarAdminClient(broker.adminUrl, { token: broker.token });
}

export interface BrokerEndpoints {
  /** Binary protocol, `pulsar://host:6650` (the Python peer uses it). */
  readonly pulsarUrl: string;
  /** Web port, `http://host:8080` (WebSocket API and admin REST). */
  readonly adminUrl: string;
  readonly token?: string;
}

export type BenchTransportKind = 'pulsar-ws' | 'pulsar' | 'memory';

/** A transport of the asked kind for the bench's and the drills' agents, patient through broker restarts. */
export async function transportFor(kind: BenchTransportKind, broker: BrokerEndpoints | undefined, log: Logger): Promise<Transport> {
  if (kind === 'memory') return createTransport({ kind: 'memory', log });
  return createTransport({
    kind,
    serviceUrl: broker?.pulsarUrl,
    adminUrl: broker?.adminUrl,
    ...(broker?.token ? { access: await tokenAccess(broker.token, log) } : {}),
    log,
    // A broker restart takes tens of seconds on small machines: sends wait it out rather than fail.
    ws: { sendTimeoutMs: 180_000, connectTimeoutMs: 60_000 },
    native: { sendTimeoutMs: 180_000 },
  });
}
