import type { WorkerStats } from '../worker/worker.js';

/** Prometheus text exposition of the worker's counters. */
export function metricsText(s: WorkerStats, connected: boolean): string {
  const lines = [
    '# HELP toolwire_requests_total Requests taken from the broker, by outcome.',
    '# TYPE toolwire_requests_total counter',
    `toolwire_requests_total{outcome="answered"} ${s.answered}`,
    `toolwire_requests_total{outcome="failed"} ${s.failed}`,
    `toolwire_requests_total{outcome="nacked"} ${s.nacked}`,
    `toolwire_requests_total{outcome="dead-lettered"} ${s.deadLettered}`,
    '# HELP toolwire_requests_received_total Requests received.',
    '# TYPE toolwire_requests_received_total counter',
    `toolwire_requests_received_total ${s.received}`,
    '# HELP toolwire_requests_in_flight Requests being handled now.',
    '# TYPE toolwire_requests_in_flight gauge',
    `toolwire_requests_in_flight ${s.inFlight}`,
    '# HELP toolwire_transport_connected 1 while the broker is reachable.',
    '# TYPE toolwire_transport_connected gauge',
    `toolwire_transport_connected ${connected ? 1 : 0}`,
  ];
  return `${lines.join('\n')}\n`;
}
