/**
 * An MCP tool call carries the request's idempotency key in `_meta`, the same on a
 * redelivery: a real worker on a persistent topic of the memory transport, and the SDK's own
 * server over streamable HTTP on loopback, whose first `tools/call` is answered 503.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import { mcpPluginFactory } from '../../../../src/plugins/mcp/mcp-plugin.js';
import { IDEMPOTENCY_META_KEY } from '../../../../src/plugins/mcp/mcp-session.js';
import type { PluginContext } from '../../../../src/plugins/plugin.js';
import { PluginRegistry } from '../../../../src/plugins/registry.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { asServed, captureLogger, entry } from '../../../support/harness.js';
import { startFixture, type Fixture } from '../../../support/worker-fixture.js';

const REQUESTS = 'persistent://tg/flow/notify-request';
const RESPONSES = 'non-persistent://tg/response/notify';

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

interface CallBody {
  readonly method?: string;
  readonly params?: { readonly _meta?: Record<string, unknown> };
}

/**
 * A stateless MCP server with one tool, `send`, that records the `_meta` of each call it runs
 * (`sent`) and of each `tools/call` that arrives (`arrived`); the first to arrive is refused
 * with a 503 before it runs.
 */
async function startNotifyServer(): Promise<{ url: string; arrived: unknown[]; sent: Record<string, unknown>[]; close(): Promise<void> }> {
  const arrived: unknown[] = [];
  const sent: Record<string, unknown>[] = [];
  const http: Server = createServer((req, res) => {
    void (async () => {
      const body = (await jsonBody(req)) as CallBody | undefined;
      if (body?.method === 'tools/call') {
        arrived.push(body.params?._meta?.[IDEMPOTENCY_META_KEY]);
        if (arrived.length === 1) {
          res.writeHead(503).end();
          return;
        }
      }
      const server = new McpServer({ name: 'notify', version: '1' });
      server.registerTool('send', { description: 'sends a notice' }, (extra) => {
        sent.push(extra._meta ?? {});
        return { content: [{ type: 'text', text: `sent ${sent.length}` }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })();
  });
  await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    arrived,
    sent,
    close: () =>
      new Promise((closed) => {
        http.closeAllConnections();
        http.close(() => closed());
      }),
  };
}

describe('mcp idempotency key', () => {
  let server: Awaited<ReturnType<typeof startNotifyServer>> | undefined;
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    await server?.close();
    fx = undefined;
    server = undefined;
  });

  it(`sends the request id as _meta["${IDEMPOTENCY_META_KEY}"], the same on a redelivery`, async () => {
    server = await startNotifyServer();
    const { log } = captureLogger('warn');
    const ctx: PluginContext = { log, configDir: tmpdir(), secrets: loadSecrets({}), settings: {} };
    const entries = [
      entry('tool-service', 'notify', {
        id: 'notify',
        'request-queue': REQUESTS,
        'response-queue': RESPONSES,
        plugin: { kind: 'mcp', transport: 'http', url: server.url },
      }),
      entry('tool', 'send', { name: 'send', service: 'notify' }),
    ];
    const catalog = await buildCatalog(entries, new PluginRegistry().register(mcpPluginFactory), ctx, { policy: new ExecPolicy('directory') });
    const createPlugin = async () => mcpPluginFactory.create(asServed(catalog.services.get('notify')), ctx);
    fx = await startFixture(catalog, {}, RESPONSES, { nackDelayMs: 10 }, { createPlugin });
    const id = await fx.request(REQUESTS, {});
    const answer = await fx.responses.final(id, 10_000);
    expect(answer.at(-1)).toMatchObject({ error: null, response: 'sent 1' });
    // Both deliveries reached the server with the same key (the first refused before the tool ran); one ran.
    expect(server.arrived).toEqual([id, id]);
    expect(server.sent).toHaveLength(1);
    expect(server.sent[0]?.[IDEMPOTENCY_META_KEY]).toBe(id);
  });
});
