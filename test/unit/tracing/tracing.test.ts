/**
 * Traces from the agent to the plugin: OpenTelemetry's SDK exporting over OTLP/HTTP (JSON) to
 * a receiver in this process, a worker on the memory transport, an agent span around a
 * ToolClient call, an openapi tool whose API is a real HTTP server on loopback, and an mcp
 * tool whose server is the MCP SDK's own streamable HTTP server, answering with the `_meta`
 * its tool call carried.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { fleetMcpServer, InFlight } from '../../../src/mcp-server/fleet-mcp-server.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { startTracing, type Tracing } from '../../../src/tracing/start-tracing.js';
import { tracingEnabled } from '../../../src/tracing/trace-context.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { serviceDescriptor, toolDescriptor } from '../../support/descriptors.js';
import { writeConfigDir, removeDir } from '../../support/pulsar-app.js';
import { createLogger } from '../../../src/logging.js';

/** The parts of an OTLP/JSON ExportTraceServiceRequest this test reads (ids are hex in JSON). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}
interface OtlpRequest {
  resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const spans: OtlpSpan[] = [];
let receiver: Server;
let api: Server;
let mcpHttp: Server;
let apiTraceparent: string | undefined;
let app: App;
let tracing: Tracing | undefined;
let dir: string;
/** The worker's own logger (with its trace mixin), its lines kept. */
const lines: string[] = [];
const logs = { log: createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(l) } }), lines: () => lines };

const listen = async (s: Server): Promise<number> => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return (s.address() as AddressInfo).port;
};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest;
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  api = createServer((req, res) => {
    apiTraceparent = req.headers['traceparent'] as string | undefined;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  // Stateless streamable HTTP: a server and transport per request, as the SDK's examples do.
  mcpHttp = createServer((req, res) => {
    const server = new McpServer({ name: 'meta-echo', version: '1' });
    server.registerTool('meta-echo', { description: 'answers with the _meta its call carried' }, (extra) => ({
      content: [{ type: 'text', text: JSON.stringify(extra._meta ?? {}) }],
    }));
    const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void t.close().then(() => server.close()));
    void server.connect(t).then(() => t.handleRequest(req, res));
  });
  const [receiverPort, apiPort, mcpPort] = [await listen(receiver), await listen(api), await listen(mcpHttp)];
  tracing = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`, OTEL_SERVICE_NAME: 'toolwire-test' }, logs.log);
  dir = await writeConfigDir({
    // Requests on persistent://tg/flow/<id>-request, answers on non-persistent://tg/response/<id>.
    services: [
      serviceDescriptor('api', { plugin: { kind: 'openapi', server: `http://127.0.0.1:${apiPort}`, 'allow-private': ['127.0.0.0/8'] } }),
      serviceDescriptor('mcp', { plugin: { kind: 'mcp', transport: 'http', url: `http://127.0.0.1:${mcpPort}/mcp` } }),
    ],
    tools: [toolDescriptor('ping', 'api', { 'plugin-options': { method: 'get', path: '/ping' } }), toolDescriptor('meta-echo', 'mcp')],
  });
  app = await startApp({
    settings: readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: 'off' }),
    transport: new MemoryTransport(),
    secrets: loadSecrets({}),
    log: logs.log,
  });
});

afterAll(async () => {
  await app?.stop(100);
  await tracing?.shutdown();
  receiver?.close();
  api?.close();
  mcpHttp?.close();
  await removeDir(dir);
});

describe('tracing over OTLP', () => {
  it('follows a call from the agent (or an MCP client) through the worker into the plugin and on to the API', async () => {
    expect(tracingEnabled()).toBe(true);
    const agent = trace.getTracer('agent');
    const ids = await agent.startActiveSpan('agent decides to ping', async (span) => {
      await app.client.call({
        requestQueue: 'persistent://tg/flow/api-request',
        responseQueue: 'non-persistent://tg/response/api',
        tool: 'ping',
        config: {},
        arguments: {},
      });
      span.end();
      return span.spanContext();
    });
    const agentCallTraceparent = apiTraceparent;
    // The same through an MCP server: the worker's span reaches it in the call's `_meta`.
    const mcpIds = await agent.startActiveSpan('agent asks an MCP tool', async (span) => {
      const answer = await app.client.call({
        requestQueue: 'persistent://tg/flow/mcp-request',
        responseQueue: 'non-persistent://tg/response/mcp',
        tool: 'meta-echo',
        config: {},
        arguments: {},
      });
      span.end();
      return { ...span.spanContext(), answer };
    });
    // An MCP client's trace context in `_meta`, through `mcp serve`'s handler.
    const mcpTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const { server, dispose } = fleetMcpServer(
      { catalog: () => app.catalog, onCatalogChange: () => () => {}, client: app.client, log: logs.log, maxInFlight: 4, callTimeoutMs: 10_000 },
      new InFlight(),
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const mcp = new Client({ name: 'test', version: '1' });
    await mcp.connect(clientSide);
    const r = await mcp.callTool({ name: 'ping', arguments: {}, _meta: { traceparent: `00-${mcpTrace}-00f067aa0ba902b7-01` } });
    expect(r.isError).toBeFalsy();
    await mcp.close();
    dispose();

    await app.stop(100);
    await tracing!.shutdown();
    tracing = undefined;
    expect(spans.some((s) => s.name === 'tool-service api' && s.traceId === mcpTrace && s.parentSpanId === '00f067aa0ba902b7')).toBe(true);

    const worker = spans.find((s) => s.name === 'tool-service api' && s.traceId === ids.traceId);
    expect(worker, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(worker!.traceId).toBe(ids.traceId);
    expect(worker!.parentSpanId).toBe(ids.spanId);
    const attrs = Object.fromEntries((worker!.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]));
    expect(attrs).toMatchObject({ 'toolwire.service': 'api', 'toolwire.tool': 'ping', 'toolwire.outcome': 'answered' });
    const plugin = spans.find((s) => s.name === 'plugin ping');
    expect(plugin).toMatchObject({ traceId: ids.traceId, parentSpanId: worker!.spanId });
    // The API was called inside the worker's span.
    expect(agentCallTraceparent).toBe(`00-${ids.traceId}-${worker!.spanId}-01`);
    // So was the MCP server, which saw the worker's span in `_meta`.
    const mcpWorker = spans.find((s) => s.name === 'tool-service mcp' && s.traceId === mcpIds.traceId);
    expect(mcpWorker?.parentSpanId).toBe(mcpIds.spanId);
    expect(JSON.parse(mcpIds.answer)).toMatchObject({ traceparent: `00-${mcpIds.traceId}-${mcpWorker!.spanId}-01` });
    // And the worker's log lines of that request carry the trace.
    const settled = logs
      .lines()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['msg'] === 'request settled');
    expect(settled).toMatchObject({ trace_id: ids.traceId, span_id: worker!.spanId });
  });
});
