import type { ServerResponse } from 'node:http';
import type { ConfigStatus } from '../config/config-follower.js';
import type { Transport } from '../transport/transport.js';
import type { Worker } from '../worker/worker.js';
import { json } from './http-io.js';
import { metricsText } from './metrics.js';

/** What the probes and the scraper read. */
export interface HealthSources {
  readonly worker: Worker;
  readonly transport: Transport;
  readonly config?: () => ConfigStatus;
}

/** `GET /readyz`: 200 when the worker serves its catalog, 503 with the reason otherwise. */
export function readiness(res: ServerResponse, o: HealthSources): void {
  const { worker, transport } = o;
  const config = o.config?.();
  const abandoned = worker.abandoned();
  // Until a valid catalog has been read (a config service with none yet) there is nothing
  // to serve; a service blocked by calls running past their timeout serves nothing either.
  const ready = worker.state === 'running' && transport.connected && (!config || config.version !== undefined) && !abandoned.some((a) => a.blocked);
  json(res, ready ? 200 : 503, {
    status: ready ? 'ready' : 'not-ready',
    worker: worker.state,
    transport: transport.connected ? 'connected' : 'disconnected',
    ...(config ? { config } : {}),
    ...(abandoned.length > 0 ? { abandoned } : {}),
  });
}

/** `GET /metrics`: Prometheus text. */
export function metrics(res: ServerResponse, o: HealthSources): void {
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
  res.end(metricsText(o.worker.stats(), o.transport.connected, o.config?.()));
}
