import type { ConfigStatus } from '../config/config-follower.js';
import type { WorkerStats } from '../worker/worker.js';

/** Prometheus text exposition of the worker's counters. */
export function metricsText(s: WorkerStats, connected: boolean, config?: ConfigStatus): string {
  const lines = [
    '# HELP toolwire_requests_total Requests taken from the broker, by outcome.',
    '# TYPE toolwire_requests_total counter',
    `toolwire_requests_total{outcome="answered"} ${s.answered}`,
    `toolwire_requests_total{outcome="failed"} ${s.failed}`,
    `toolwire_requests_total{outcome="nacked"} ${s.nacked}`,
    `toolwire_requests_total{outcome="dead-lettered"} ${s.deadLettered}`,
    `toolwire_requests_total{outcome="duplicate"} ${s.duplicates}`,
    '# HELP toolwire_requests_shed_total Requests of non-persistent topics answered unavailable because the backlog was full.',
    '# TYPE toolwire_requests_shed_total counter',
    `toolwire_requests_shed_total ${s.shed}`,
    '# HELP toolwire_requests_received_total Requests received.',
    '# TYPE toolwire_requests_received_total counter',
    `toolwire_requests_received_total ${s.received}`,
    '# HELP toolwire_requests_in_flight Requests being handled now.',
    '# TYPE toolwire_requests_in_flight gauge',
    `toolwire_requests_in_flight ${s.inFlight}`,
    '# HELP toolwire_requests_queued Requests of non-persistent topics taken from the broker and waiting for a slot.',
    '# TYPE toolwire_requests_queued gauge',
    `toolwire_requests_queued ${s.queued}`,
    '# HELP toolwire_transport_connected 1 while the broker is reachable.',
    '# TYPE toolwire_transport_connected gauge',
    `toolwire_transport_connected ${connected ? 1 : 0}`,
  ];
  if (config) {
    lines.push(
      '# HELP toolwire_config_reloads_total Config versions read, by what became of them.',
      '# TYPE toolwire_config_reloads_total counter',
      `toolwire_config_reloads_total{result="applied"} ${config.reloads.applied}`,
      `toolwire_config_reloads_total{result="rejected"} ${config.reloads.rejected}`,
      `toolwire_config_reloads_total{result="failed"} ${config.reloads.failed}`,
      '# HELP toolwire_config_rejected 1 while the newest config read is refused and an older one serves.',
      '# TYPE toolwire_config_rejected gauge',
      `toolwire_config_rejected ${config.rejected ? 1 : 0}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
