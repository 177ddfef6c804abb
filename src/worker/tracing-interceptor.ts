import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracingEnabled } from '../tracing/trace-context.js';
import type { Interceptor } from './interceptor.js';

/** performance.now() milliseconds as the epoch milliseconds a span's time takes. */
const epoch = (relativeMs: number): number => performance.timeOrigin + relativeMs;

/**
 * A span per request, a child of the agent's when its message carries `traceparent`, with
 * the service, tool, outcome and redelivery count; and a child span for the time in the
 * plugin. The plugin runs inside the request's span, so what it sends on (an HTTP header to
 * an API or the Dify daemon) carries the trace. Not in the chain while tracing is off.
 */
export function tracingInterceptor(): Interceptor | undefined {
  if (!tracingEnabled()) return undefined;
  const tracer = trace.getTracer('toolwire');
  return (input, next) => {
    const { service, message, receivedAt } = input;
    const parent = propagation.extract(ROOT_CONTEXT, message.properties);
    return tracer.startActiveSpan(
      `tool-service ${service.id}`,
      {
        kind: SpanKind.CONSUMER,
        startTime: epoch(receivedAt),
        attributes: {
          'toolwire.service': service.id,
          'messaging.system': 'pulsar',
          'messaging.destination.name': service.requestQueue,
          'toolwire.redelivery_count': message.redeliveryCount,
        },
      },
      parent,
      async (span) => {
        try {
          const result = await next(input);
          const { tool, errorType, pluginStartedAt, pluginEndedAt } = result;
          span.setAttribute('toolwire.outcome', result.outcome);
          if (tool) span.setAttribute('toolwire.tool', tool.name);
          if (errorType) {
            span.setAttribute('toolwire.error_type', errorType);
            span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
          }
          if (pluginStartedAt !== undefined && pluginEndedAt !== undefined) {
            tracer
              .startSpan(
                `plugin ${tool?.name ?? service.id}`,
                { kind: SpanKind.INTERNAL, startTime: epoch(pluginStartedAt), attributes: { 'toolwire.plugin': service.plugin?.kind ?? '' } },
                trace.setSpan(context.active(), span),
              )
              .end(epoch(pluginEndedAt));
          }
          return result;
        } finally {
          span.end();
        }
      },
    );
  };
}
