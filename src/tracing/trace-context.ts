import { context, propagation, trace, type Context } from '@opentelemetry/api';

/**
 * W3C trace context across the broker: `traceparent` and `tracestate` travel as message
 * properties (TrustGraph's clients ignore properties they do not know). Everything here is a
 * no-op until tracing is switched on (startTracing), so that a worker without an exporter pays
 * one boolean test per request.
 */
let enabled = false;

export function setTracingEnabled(on: boolean): void {
  enabled = on;
}

export function tracingEnabled(): boolean {
  return enabled;
}

/** Write the active (or given) context into a carrier: message properties, HTTP headers. */
export function injectTraceContext(carrier: Record<string, string>, from?: Context): void {
  if (enabled) propagation.inject(from ?? context.active(), carrier);
}

/** The `trace_id`/`span_id` of the active span, for log lines. */
export function traceLogFields(): Record<string, string> {
  if (!enabled) return {};
  const s = trace.getActiveSpan()?.spanContext();
  return s ? { trace_id: s.traceId, span_id: s.spanId } : {};
}
