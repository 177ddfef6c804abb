/**
 * The hop count an agent's tool calls carry (envelope/hops.ts), through every front door of
 * the fleet: a request topic, the HTTP gateway and `mcp serve --http`, and on through the MCP
 * (http) and OpenAPI plugins, whose servers may be those very front doors. All in process, on
 * the memory transport; the tool that answers records the count its call came with.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fleetOn } from '../../../src/assembly/fleet.js';
import type { Catalog } from '../../../src/catalog/catalog.js';
import { ToolClient } from '../../../src/client/tool-client.js';
import { invokeTool } from '../../../src/http/gateway-route.js';
import { McpHttpServer } from '../../../src/mcp-server/mcp-http.js';
import type { Plugin, ToolCall } from '../../../src/plugins/plugin.js';
import { PreparedCall } from '../../../src/worker/prepared-call.js';
import { catalogOf, captureLogger, entry, pluginMaker, testRegistry } from '../../support/harness.js';
import { serviceDescriptor as service, toolDescriptor as tool } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const REQ = 'persistent://tg/flow/svc-request';
const RES = 'non-persistent://tg/response/svc';
const log = captureLogger('warn').log;

/** The hop count of each call the tool answered, in order (undefined: the request said none). */
const seen: (number | undefined)[] = [];
const behaviours = {
  record: (call: ToolCall) => {
    seen.push(call.hops);
    return 'ok';
  },
};

let catalog: Catalog;
let fx: Fixture;
let client: ToolClient;
let gateway: Server;
let gatewayUrl: string;
let mcp: McpHttpServer;
let mcpUrl: string;

beforeAll(async () => {
  catalog = await catalogOf(
    [entry('tool-service', 'svc', service('svc', { plugin: { kind: 'test', behaviour: 'record' } })), entry('tool', 'echo', tool('echo', 'svc'))],
    testRegistry(behaviours),
  );
  fx = await startFixture(catalog, behaviours, RES);
  client = new ToolClient(fx.transport, log);
  gateway = createServer((req, res) => {
    void invokeTool('echo', req, res, { catalog: () => catalog, client, log });
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  mcp = new McpHttpServer(
    { catalog: () => catalog, onCatalogChange: () => () => undefined, client, log, maxInFlight: 8, callTimeoutMs: 5_000 },
    { host: '127.0.0.1', port: 0, token: undefined },
  );
  mcpUrl = `http://127.0.0.1:${(await mcp.start()).port}/mcp`;
});
afterAll(async () => {
  await mcp?.close();
  await new Promise<void>((resolve) => (gateway ? gateway.close(() => resolve()) : resolve()));
  await client?.close();
  await fx?.close();
});
beforeEach(() => {
  seen.length = 0;
});

describe('a tool request on the broker', () => {
  it("gives the plugin the request's hop count, and none when it carries none", async () => {
    await fx.responses.final(await fx.request(REQ, {}, {}, { 'toolwire-hops': '2' }));
    await fx.responses.final(await fx.request(REQ, {}, {}));
    expect(seen).toEqual([2, undefined]);
  });

  it('is answered hop-limit, running nothing, when it is nested in more than 4 agent calls', async () => {
    const [answer] = await fx.responses.final(await fx.request(REQ, {}, {}, { 'toolwire-hops': '5' }));
    expect(answer?.error).toEqual({ type: 'hop-limit', message: expect.stringMatching(/nested in 5 agent calls, past the limit of 4/) });
    const [bad] = await fx.responses.final(await fx.request(REQ, {}, {}, { 'toolwire-hops': 'many' }));
    expect(bad?.error?.type).toBe('invalid-request');
    expect(seen).toEqual([]);
  });

  it("carries the count an agent's fleet call gives it", async () => {
    const fleet = fleetOn(client, () => catalog);
    const target = fleet.tool('echo')!;
    const text: string[] = [];
    for await (const t of fleet.call(target, {}, { signal: AbortSignal.timeout(5_000), hops: 3 })) text.push(t);
    expect([text.join(''), seen]).toEqual(['ok', [3]]);
  });
});

describe('the HTTP gateway', () => {
  const invoke = (hops?: string) =>
    fetch(`${gatewayUrl}/v1/tools/echo/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(hops === undefined ? {} : { 'toolwire-hops': hops }) },
      body: '{"arguments":{}}',
    });

  it('passes the toolwire-hops header on to the request it publishes', async () => {
    expect(await (await invoke('3')).text()).toContain('"response":"ok"');
    expect(await (await invoke()).text()).toContain('"response":"ok"');
    expect(seen).toEqual([3, undefined]);
  });

  it('answers 508 past the limit and 400 for a count that is not one, publishing nothing', async () => {
    const deep = await invoke('5');
    expect(deep.status).toBe(508);
    expect(((await deep.json()) as { error: string }).error).toMatch(/nested in 5 agent calls, past the limit of 4/);
    expect((await invoke('-1')).status).toBe(400);
    expect(seen).toEqual([]);
  });
});

describe('mcp serve over HTTP', () => {
  async function callWith(hops: string | undefined): Promise<{ isError?: boolean; text: string }> {
    const c = new Client({ name: 'test', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: hops === undefined ? {} : { 'toolwire-hops': hops } } }));
    try {
      const r = (await c.callTool({ name: 'echo', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
      return { ...(r.isError ? { isError: true } : {}), text: r.content.map((p) => p.text).join('') };
    } finally {
      await c.close();
    }
  }

  it('passes the toolwire-hops header on to the request it publishes', async () => {
    expect(await callWith('2')).toEqual({ text: 'ok' });
    expect(seen).toEqual([2]);
  });

  it('refuses a call past the limit as a hop-limit error result', async () => {
    expect(await callWith('5')).toEqual({ isError: true, text: expect.stringMatching(/^hop-limit: this request is nested in 5 agent calls/) });
    expect(seen).toEqual([]);
  });
});

describe('the plugins that call HTTP send the count on, so that a loop through a front door is counted', () => {
  let backends: Catalog;
  const plugins: Plugin[] = [];
  beforeAll(async () => {
    backends = await catalogOf([
      entry('tool-service', 'via-mcp', service('via-mcp', { plugin: { kind: 'mcp', transport: 'http', url: mcpUrl } })),
      entry('tool', 'mcp-echo', tool('mcp-echo', 'via-mcp', { 'plugin-options': { tool: 'echo' } })),
      entry('tool-service', 'via-gateway', service('via-gateway', { plugin: { kind: 'openapi', server: gatewayUrl, 'allow-private': true } })),
      entry(
        'tool',
        'gateway-echo',
        tool('gateway-echo', 'via-gateway', {
          arguments: [{ name: 'arguments', type: 'object' }],
          'plugin-options': { method: 'post', path: '/v1/tools/echo/invoke', body: { 'media-type': 'application/json' }, parameters: [] },
        }),
      ),
    ]);
  });
  afterAll(async () => {
    for (const p of plugins) await p.close?.();
  });

  async function callThrough(serviceId: string, toolName: string, hops: number | undefined): Promise<string> {
    const svc = backends.services.get(serviceId)!;
    const plugin = (await pluginMaker()(svc))!;
    plugins.push(plugin);
    const call = new PreparedCall(
      { requestId: 'r1', service: svc, tool: backends.tools.get(toolName), config: {}, arguments: {}, hops, stream: false, timeoutMs: 5_000 },
      log,
    );
    const answer = plugin.invoke(call);
    if (typeof answer === 'string' || answer instanceof Promise) return answer;
    const parts: string[] = [];
    for await (const part of answer) parts.push(part);
    return parts.join('');
  }

  it('an MCP server over HTTP (here mcp serve) gets the toolwire-hops header', async () => {
    expect(await callThrough('via-mcp', 'mcp-echo', 3)).toBe('ok');
    expect(await callThrough('via-mcp', 'mcp-echo', undefined)).toBe('ok');
    expect(seen).toEqual([3, undefined]);
  });

  it('an HTTP API (here the gateway) gets the toolwire-hops header', async () => {
    expect(await callThrough('via-gateway', 'gateway-echo', 4)).toContain('"response":"ok"');
    expect(seen).toEqual([4]);
  });
});
