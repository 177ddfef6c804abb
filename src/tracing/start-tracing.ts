import type { Logger } from 'pino';
import { setTracingEnabled } from './trace-context.js';

/** The traces endpoint, as the OTLP/HTTP specification builds it from the two variables. */
function tracesUrl(env: NodeJS.ProcessEnv): string {
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  if (traces) return traces;
  return `${env['OTEL_EXPORTER_OTLP_ENDPOINT']!.replace(/\/$/, '')}/v1/traces`;
}

export interface Tracing {
  /** Export what is buffered and stop. */
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry's SDK and OTLP/HTTP exporter, only when the standard variables ask for them
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, not
 * `OTEL_SDK_DISABLED=true`; the exporter reads the rest: headers, timeout...). Otherwise
 * nothing is loaded and the API stays a no-op. `OTEL_SERVICE_NAME` names the process (toolwire).
 */
export async function startTracing(env: NodeJS.ProcessEnv, log: Logger): Promise<Tracing | undefined> {
  if (env['OTEL_SDK_DISABLED'] === 'true') return undefined;
  if (!env['OTEL_EXPORTER_OTLP_ENDPOINT'] && !env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) return undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env['OTEL_SERVICE_NAME'] ?? 'toolwire' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(env) }))],
  });
  // The global tracer provider, the AsyncLocalStorage context manager and the W3C propagator.
  provider.register();
  setTracingEnabled(true);
  log.info({ endpoint: tracesUrl(env) }, 'tracing: exporting spans over OTLP/HTTP');
  return {
    async shutdown() {
      setTracingEnabled(false);
      await provider.shutdown().catch((err: unknown) => log.warn({ err }, 'tracing: shutdown failed'));
    },
  };
}
