/** Cancellation on a real broker: an agent that stops waiting aborts the tool on the worker. */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import type { ToolCall } from '../../src/plugins/plugin.js';
import type { Transport } from '../../src/transport/transport.js';
import { captureLogger, testRegistry } from '../support/harness.js';
import { removeDir, startPulsarApp, suffix, writeConfigDir, brokerTransport } from '../support/pulsar-app.js';

const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const { log } = captureLogger('warn');
const started: string[] = [];
const reasons: string[] = [];
const topics = { persistent: `persistent://tg/flow/cancel-${tag}-request`, 'non-persistent': `non-persistent://tg/request/cancel-${tag}` };
const RES = `non-persistent://tg/response/cancel-${tag}`;

let app: App;
let agent: Transport;
let client: ToolClient;
let dir: string;

beforeAll(async () => {
  dir = await writeConfigDir({
    services: Object.entries(topics).map(([k, q]) => ({ id: `slow-${k}`, 'request-queue': q, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'wait' }, 'timeout-ms': 60_000 })),
    tools: Object.keys(topics).map((k) => ({ name: `slow-${k}`, service: `slow-${k}` })),
  });
  const registry = testRegistry({
    wait: (call: ToolCall) =>
      (async function* () {
        started.push(call.requestId);
        await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
        reasons.push((call.signal.reason as Error).message);
        yield 'never read';
      })(),
  });
  app = await startPulsarApp({ adminUrl, configDir: dir, log, registry });
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await app?.stop(1_000);
  await removeDir(dir);
});

describe('cancellation through the broker', () => {
  it.each(Object.entries(topics))('reaches the tool on a %s request topic', async (_kind, requestQueue) => {
    const before = reasons.length;
    const abort = new AbortController();
    const call = client.call({ requestQueue, responseQueue: RES, config: {}, arguments: {}, signal: abort.signal });
    for (let i = 0; i < 500 && started.length <= before; i++) await sleep(20);
    expect(started.length).toBe(before + 1);
    abort.abort();
    await expect(call).rejects.toThrow(/call aborted/);
    for (let i = 0; i < 500 && reasons.length <= before; i++) await sleep(20);
    expect(reasons.slice(before)).toEqual(['the agent cancelled the call']);
  }, 30_000);
});
