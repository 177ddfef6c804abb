import type { Logger } from 'pino';
import { createTransport } from '../transport/create-transport.js';
import type { Transport } from '../transport/transport.js';

/** Where the bench and the drills find the broker. */
export interface BrokerEndpoints {
  /** Binary protocol, `pulsar://host:6650` (the Python peer uses it). */
  readonly pulsarUrl: string;
  /** Web port, `http://host:8080` (WebSocket API and admin REST). */
  readonly adminUrl: string;
  readonly token?: string;
}

export type BenchTransportKind = 'pulsar-ws' | 'pulsar' | 'memory';

/**
 * A transport of the asked kind, through the transport engineer's factory. (The CLI's
 * open-transport.ts is memory-only until the lead wires the Pulsar kinds into it.)
 */
export function transportFor(kind: BenchTransportKind, broker: BrokerEndpoints | undefined, log: Logger): Promise<Transport> {
  if (kind === 'memory') return createTransport({ kind: 'memory', log });
  return createTransport({
    kind,
    serviceUrl: broker?.pulsarUrl,
    adminUrl: broker?.adminUrl,
    token: broker?.token,
    log,
    // A broker restart takes tens of seconds on small machines: sends wait it out rather than fail.
    ws: { sendTimeoutMs: 180_000, connectTimeoutMs: 60_000 },
    native: { sendTimeoutMs: 180_000 },
  });
}
