import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { startTracing } from '../src/tracing/start-tracing.js';

/**
 * Tracing switched on as a deployment would have it, exporting over OTLP/HTTP to a receiver in
 * this process that reads and drops every batch: the cost of tracing, without a collector's.
 */
export async function startTraceSink(): Promise<{ readonly exportedBytes: () => number; close(): Promise<void> }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const tracing = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, pino({ level: 'warn' }));
  return {
    exportedBytes: () => bytes,
    async close() {
      await tracing?.shutdown();
      await new Promise((r) => server.close(r));
    },
  };
}
