import type { ServerResponse } from 'node:http';
import type { ConfigStatus } from '../config/config-follower.js';
import type { Transport } from '../transport/transport.js';
import type { PluginFault } from '../plugins/plugin-faults.js';
import type { Worker } from '../worker/worker.js';
import { json } from './http-io.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';

/** What the probes and the scraper read. */
export interface HealthSources {
  readonly worker: Worker;
  readonly transport: Transport;
  readonly config?: () => ConfigStatus;
  readonly faults?: () => readonly PluginFault[];
}

/**
 * `GET /readyz`: 200 when the worker serves its catalog, 503 otherwise; with `detail`, the
 * reasons too (config, abandoned calls, faults), whose texts quote descriptors.
 */
export function readiness(res: ServerResponse, sources: HealthSources, detail: boolean): void {
  const { worker, transport } = sources;
  const config = sources.config?.();
  const abandoned = worker.abandoned();
  const faults = sources.faults?.() ?? [];
  // Until a valid catalog has been read (a config service with none yet) there is nothing
  // to serve; a service blocked by calls running past their timeout serves nothing either.
  // A plugin that found the worker misconfigured (a daemon refusing its key) serves nothing until fixed.
  const ready =
    worker.state === 'running' &&
    transport.connected &&
    (!config || config.version !== undefined) &&
    !abandoned.some((abandonment) => abandonment.blocked) &&
    faults.length === 0;
  json(res, ready ? 200 : 503, {
    status: ready ? 'ready' : 'not-ready',
    worker: worker.state,
    transport: transport.connected ? 'connected' : 'disconnected',
    ...(detail && config ? { config } : {}),
    ...(detail && abandoned.length > 0 ? { abandoned } : {}),
    ...(detail && faults.length > 0 ? { faults } : {}),
  });
}

/** `GET /metrics`: Prometheus text, from prom-client's registry. */
export async function metrics(res: ServerResponse, workerMetrics: WorkerMetrics): Promise<void> {
  const text = await workerMetrics.text();
  res.writeHead(200, { 'content-type': workerMetrics.contentType });
  res.end(text);
}
