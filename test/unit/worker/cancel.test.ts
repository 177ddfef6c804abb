/**
 * An agent that stops waiting cancels the call on the worker running it (our extension:
 * a cancel topic per namespace that every worker reads), on both kinds of request topic.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolClient } from '../../../src/client/tool-client.js';
import { fleetMcpServer, InFlight } from '../../../src/mcp-server/fleet-mcp-server.js';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { captureLogger, catalogOf, entry, testRegistry, type Behaviour } from '../../support/harness.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

let fx: Fixture | undefined;
let client: ToolClient | undefined;
afterEach(async () => {
  await client?.close();
  await fx?.close();
  fx = undefined;
  client = undefined;
});

/** A tool that waits until its signal aborts, and records why. */
function waiting(): { behaviour: Behaviour; started: string[]; reasons: string[] } {
  const started: string[] = [];
  const reasons: string[] = [];
  return {
    started,
    reasons,
    behaviour: (call: ToolCall) =>
      (async function* () {
        started.push(call.requestId);
        await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
        reasons.push((call.signal.reason as Error).message);
        yield 'never read';
      })(),
  };
}

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !pred(); i++) await sleep(10);
  if (!pred()) throw new Error(`never: ${what}`);
}

for (const kind of ['persistent', 'non-persistent'] as const) {
  describe(`cancellation on ${kind} request topics`, () => {
    const REQ = kind === 'persistent' ? 'persistent://tg/flow/slow-request' : 'non-persistent://tg/request/slow';
    const RES = 'non-persistent://tg/response/slow';

    async function setup() {
      const w = waiting();
      const catalog = await catalogOf(
        [
          entry('tool-service', 'slow', {
            id: 'slow',
            'request-queue': REQ,
            'response-queue': RES,
            plugin: { kind: 'test', behaviour: 'wait' },
            'timeout-ms': 60_000,
          }),
          entry('tool', 'slow', { name: 'slow', service: 'slow' }),
        ],
        testRegistry({ wait: w.behaviour }),
      );
      fx = await startFixture(catalog, { wait: w.behaviour }, RES);
      // A second worker on the same subscription: the cancel must find the one running the call.
      await fx.startAnotherWorker();
      client = new ToolClient(fx.transport, captureLogger().log);
      return { ...w, catalog };
    }

    it('aborts the tool of a call its agent aborted', async () => {
      const w = await setup();
      const abort = new AbortController();
      const call = client!.call({ requestQueue: REQ, responseQueue: RES, config: {}, arguments: {}, signal: abort.signal });
      await until(() => w.started.length === 1, 'the tool started');
      abort.abort();
      await expect(call).rejects.toThrow(/call aborted/);
      await until(() => w.reasons.length === 1, 'the tool saw the abort');
      expect(w.reasons).toEqual(['the agent cancelled the call']);
    });

    it('aborts the tool when an MCP client cancels the call through mcp serve', async () => {
      const w = await setup();
      const { server } = fleetMcpServer(
        { catalog: () => w.catalog, onCatalogChange: () => () => undefined, client: client!, log: captureLogger().log, maxInFlight: 8, callTimeoutMs: 60_000 },
        new InFlight(),
      );
      const [a, b] = InMemoryTransport.createLinkedPair();
      await server.connect(a);
      const mcp = new Client({ name: 'test', version: '1' });
      await mcp.connect(b);
      const abort = new AbortController();
      const call = mcp.callTool({ name: 'slow', arguments: {} }, undefined, { signal: abort.signal });
      await until(() => w.started.length === 1, 'the tool started');
      abort.abort();
      await expect(call).rejects.toThrow();
      await until(() => w.reasons.length === 1, 'the tool saw the abort');
      expect(w.reasons).toEqual(['the agent cancelled the call']);
      await mcp.close();
    });
  });
}
