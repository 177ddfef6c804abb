/**
 * TrustGraph's own `mcp-tool` service (trustgraph-flow 2.11.1, Python MCP SDK over streamable
 * HTTP) calling `toolwire mcp serve`: the path by which a stock TrustGraph agent, whose
 * tool-service client is broken in 2.11.1, reaches every toolwire tool. The mcp-tool service
 * gets its flow and its MCP servers from TrustGraph's config service (its own code, in-memory
 * table), as in a deployment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BrokerConfigApi } from '../../src/config/trustgraph/broker-config-api.js';
import { TrustGraphConfigStore } from '../../src/config/trustgraph/trustgraph-store.js';
import type { Subscription, Transport } from '../../src/transport/transport.js';
import { captureLogger } from '../support/harness.js';
import { suffix, brokerTransport } from '../support/pulsar-app.js';
import { interopPython, startConfigService, venvScript, type ConfigServiceFixture } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const { log } = captureLogger('warn');
const TOKEN = `mcp-${tag}`;
const processorId = `mcp-tool-${tag}`;
const requestTopic = `non-persistent://tg/request/mcptool-${tag}`;
const responseTopic = `non-persistent://tg/response/mcptool-${tag}`;

let svc: ConfigServiceFixture;
let serve: ChildProcess;
let mcpTool: ChildProcess;
let agent: Transport;
let answers: Subscription;
let store: TrustGraphConfigStore;
const got = new Map<string, (body: Record<string, unknown>) => void>();

async function startServe(): Promise<string> {
  serve = spawn(process.execPath, ['bin/toolwire.js', 'mcp', 'serve', '-d', 'config', '--http', '0'], {
    env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'info', TOOLWIRE_HTTP_TOKEN: 'env:SERVE_TOKEN', SERVE_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`mcp serve did not start:\n${err}`)), 30_000);
    serve.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"url":"(http:\/\/[^"]+\/mcp)"/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
}

/** A ToolRequest as TrustGraph's agent sends it to the mcp-tool service; its ToolResponse. */
async function invoke(name: string, parameters: Record<string, unknown>, timeoutMs = 5_000): Promise<Record<string, unknown> | undefined> {
  const id = randomUUID();
  const answer = new Promise<Record<string, unknown>>((resolve) => got.set(id, resolve));
  await (await agent.producer(requestTopic)).send({ data: JSON.stringify({ name, parameters: JSON.stringify(parameters) }), properties: { id } });
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([answer, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
  clearTimeout(timer);
  got.delete(id);
  return r;
}

beforeAll(async () => {
  const python = await interopPython();
  // TrustGraph's processors reach the config service on its default request and response
  // queues (only the push queue is a flag), so this fixture serves those, under an id of its own.
  svc = await startConfigService({ python, pulsarUrl, id: `config-svc-${tag}` });
  const url = await startServe();
  agent = await brokerTransport(adminUrl, log);
  store = new TrustGraphConfigStore(new BrokerConfigApi(agent, log), 'default');
  await store.put([
    // The flow the mcp-tool processor runs, with its two queues; and the MCP server it calls.
    {
      type: `processor:${processorId}`,
      key: 'default',
      value: JSON.stringify({ topics: { request: `request:tg:mcptool-${tag}`, response: `response:tg:mcptool-${tag}` } }),
    },
    { type: 'mcp', key: 'calc', value: JSON.stringify({ url, 'remote-name': 'calculate', 'auth-token': TOKEN }) },
    { type: 'mcp', key: 'joke', value: JSON.stringify({ url, 'remote-name': 'tell-joke', 'auth-token': TOKEN }) },
  ]);
  answers = await agent.subscribe({ topic: responseTopic, subscription: `agent-${tag}`, type: 'Exclusive', unsubscribeOnClose: true });
  void (async () => {
    for await (const m of answers) {
      await m.ack();
      got.get(m.properties['id'] ?? '')?.(JSON.parse(m.data.toString('utf8')) as Record<string, unknown>);
    }
  })();
  mcpTool = spawn(venvScript(python, 'mcp-tool'), ['--id', processorId, '-p', pulsarUrl, '--no-metrics', '--no-loki-enabled', '-l', 'WARNING'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Ready once it has read from the config service both its flow (then it answers) and the MCP
  // servers (then it answers without an error): the two can arrive apart, and an answer of
  // "MCP service calc not known" in between is not readiness.
  const deadline = Date.now() + 60_000;
  let ready: Record<string, unknown> | undefined;
  do {
    if (Date.now() > deadline) throw new Error(`TrustGraph’s mcp-tool service never answered without an error; last answer: ${JSON.stringify(ready)}`);
    ready = await invoke('calc', { expression: '1+1' }, 2_000);
  } while (ready?.['error'] !== null);
}, 300_000);

afterAll(async () => {
  mcpTool?.kill('SIGTERM');
  serve?.kill('SIGTERM');
  await answers?.close();
  await store?.close();
  await agent?.close();
  await svc?.stop();
});

describe('TrustGraph’s mcp-tool service calling toolwire mcp serve', () => {
  it('reaches toolwire tools through TrustGraph’s MCP client', async () => {
    expect(await invoke('calc', { expression: '6*7' })).toMatchObject({ error: null, text: '42' });
    const joke = await invoke('joke', { topic: 'pulsar' });
    expect(joke?.['error']).toBeNull();
    expect(String(joke?.['text']).length).toBeGreaterThan(10);
  });

  it('carries a toolwire error back as the tool’s answer', async () => {
    const r = await invoke('calc', {});
    // The MCP result is isError with the text; TrustGraph's service reads only the text and
    // passes it on as an ordinary answer (it never looks at isError).
    expect(r).toMatchObject({ error: null, text: expect.stringMatching(/^invalid-arguments: .*expression/) });
  });
});
