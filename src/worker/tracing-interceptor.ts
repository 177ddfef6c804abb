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
  return (ctx, next) => {
    const parent = propagation.extract(ROOT_CONTEXT, ctx.message.properties);
    return tracer.startActiveSpan(
      `tool-service ${ctx.service.id}`,
      {
        kind: SpanKind.CONSUMER,
        startTime: epoch(ctx.receivedAt),
        attributes: {
          'toolwire.service': ctx.service.id,
          'messaging.system': 'pulsar',
          'messaging.destination.name': ctx.service.requestQueue,
          'toolwire.redelivery_count': ctx.message.redeliveryCount,
        },
      },
      parent,
      async (span) => {
        try {
          const outcome = await next(ctx);
          span.setAttribute('toolwire.outcome', outcome);
          if (ctx.tool) span.setAttribute('toolwire.tool', ctx.tool.name);
          if (ctx.errorType) {
            span.setAttribute('toolwire.error_type', ctx.errorType);
            span.setStatus({ code: SpanStatusCode.ERROR, message: ctx.errorType });
          }
          if (ctx.pluginStartedAt !== undefined && ctx.pluginEndedAt !== undefined) {
            tracer
              .startSpan(
                `plugin ${ctx.tool?.name ?? ctx.service.id}`,
                { kind: SpanKind.INTERNAL, startTime: epoch(ctx.pluginStartedAt), attributes: { 'toolwire.plugin': ctx.service.plugin?.kind ?? '' } },
                trace.setSpan(context.active(), span),
              )
              .end(epoch(ctx.pluginEndedAt));
          }
          return outcome;
        } finally {
          span.end();
        }
      },
    );
  };
}
