/**
 * Trace context among TrustGraph's own code: with tracing on, toolwire's requests and answers
 * carry `traceparent`/`tracestate` properties, which TrustGraph 2.11.1's client and service
 * (PyPI) must ignore. Both directions, on the real broker.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import { startTracing, type Tracing } from '../../src/tracing/start-tracing.js';
import type { IncomingMessage, Transport } from '../../src/transport/transport.js';
import { serviceDescriptor, toolDescriptor } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { brokerTransport, removeDir, startPulsarApp, suffix, writeConfigDir } from '../support/pulsar-app.js';
import { PythonToolService, interopPython, tgCall } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const TW = `tw-traced-${tag}`;
const PY = `py-traced-${tag}`;

let python: string;
let receiver: Server;
let tracing: Tracing | undefined;
let app: App | undefined;
let dir: string | undefined;
let agent: Transport;
let client: ToolClient;
let service: PythonToolService | undefined;
const exported: string[] = [];

beforeAll(async () => {
  python = await interopPython();
  receiver = createServer((req, res) => {
    req.on('data', (c: Buffer) => exported.push(c.toString('utf8')));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const { log } = captureLogger('warn');
  tracing = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}` }, log);
  dir = await writeConfigDir({
    // On non-persistent://tg/request/<TW> and non-persistent://tg/response/<TW>.
    services: [serviceDescriptor(TW, { plugin: { kind: 'module', module: 'builtin:echo' } }, { requests: 'non-persistent' })],
    tools: [toolDescriptor(TW, TW, { arguments: [{ name: 'text', type: 'string' }] })],
  });
  app = await startPulsarApp({ adminUrl, configDir: dir, log });
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
  service = await PythonToolService.start({ python, pulsarUrl, id: PY, topic: PY });
}, 300_000);

afterAll(async () => {
  await service?.stop();
  await client?.close();
  await agent?.close();
  await app?.stop();
  await tracing?.shutdown();
  receiver?.close();
  await removeDir(dir);
});

describe('trace context and TrustGraph 2.11.1', () => {
  it("TrustGraph's client reads a toolwire answer that carries traceparent", async () => {
    // What toolwire answers, seen raw: the property is there.
    const seen: IncomingMessage[] = [];
    const sub = await agent.subscribe({ topic: `non-persistent://tg/response/${TW}`, subscription: `peek-${tag}`, type: 'Exclusive', receiverQueueSize: 10 });
    const peek = (async () => {
      for await (const m of sub) {
        seen.push(m);
        return;
      }
    })();
    const r = await tgCall({
      python,
      pulsarUrl,
      requestQueue: `non-persistent://tg/request/${TW}`,
      responseQueue: `non-persistent://tg/response/${TW}`,
      arguments: { text: 'traced' },
    });
    expect(r.lines).toEqual([{ result: 'traced' }]);
    await peek;
    await sub.close();
    expect(seen[0]?.properties['traceparent']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });

  it("TrustGraph's service answers a toolwire request that carries traceparent", async () => {
    // A copy of the request, seen raw: it carries the agent's span.
    const sub = await agent.subscribe({ topic: `non-persistent://tg/request/${PY}`, subscription: `peek-${tag}`, type: 'Exclusive', receiverQueueSize: 10 });
    const peek = (async () => {
      for await (const m of sub) return m;
      return undefined;
    })();
    let traceId = '';
    const text = await trace.getTracer('agent').startActiveSpan('agent', async (span) => {
      traceId = span.spanContext().traceId;
      try {
        return await client.call({
          requestQueue: `non-persistent://tg/request/${PY}`,
          responseQueue: `non-persistent://tg/response/${PY}`,
          config: { style: 'pun' },
          arguments: { topic: 'traces' },
          timeoutMs: 30_000,
        });
      } finally {
        span.end();
      }
    });
    expect(text).toContain('traces');
    expect((await peek)?.properties['traceparent']).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    await sub.close();
    const req = service!.events.find((e) => e.event === 'request');
    expect(req?.arguments).toEqual({ topic: 'traces' });
  });
});
