/**
 * toolwire against the real TrustGraph 2.11.1 Python code (PyPI trustgraph-base/-flow), on the
 * real broker: TrustGraph's ToolServiceClient calling a toolwire worker, toolwire's CLI calling
 * TrustGraph's DynamicToolService and stock joke-service, and both kinds of service sharing one
 * subscription.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient, ToolResponseError } from '../../src/client/tool-client.js';
import { ToolFailedError } from '../../src/errors.js';
import { jsonText } from '../../src/plain-object.js';
import type { ToolCall } from '../../src/plugins/plugin.js';
import type { Transport } from '../../src/transport/transport.js';
import { runCli } from '../support/cli.js';
import { serviceDescriptor, toolDescriptor, type ServiceDescriptor } from '../support/descriptors.js';
import { captureLogger, testRegistry } from '../support/harness.js';
import { deleteTopic, removeDir, startPulsarApp, suffix, topicSubscriptions, waitUntil, writeConfigDir, brokerTransport } from '../support/pulsar-app.js';
import { ResponseCollector } from '../support/worker-fixture.js';
import { PythonToolService, interopPython, tgCall, venvScript, type CallLine } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const request = (topic: string) => `non-persistent://tg/request/${topic}`;
const response = (topic: string) => `non-persistent://tg/response/${topic}`;
const queues = (topic: string) => ({ requestQueue: request(topic), responseQueue: response(topic) });
const results = (lines: CallLine[]): string[] => lines.flatMap((l) => ('result' in l ? [l.result] : []));

/** What the toolwire side saw of each request. */
interface Seen {
  readonly service: string;
  readonly requestId: string;
  readonly config: Record<string, unknown>;
  readonly arguments: Record<string, unknown>;
  readonly user: string | undefined;
}
const seen: Seen[] = [];
function record(call: ToolCall): void {
  seen.push({ service: call.service.id, requestId: call.requestId, config: { ...call.config }, arguments: { ...call.arguments }, user: call.user });
}
function jokeText(call: ToolCall): string {
  return `${jsonText(call.config['style'], 'plain')} joke about ${jsonText(call.arguments['topic'], 'nothing')}`;
}

const STORY = ['Once', ' upon a time', ', in a café ☕,', ' a broker', ' restarted.'];

const behaviours = {
  /** Answers like tg_service.py; `fail` is thrown as a tool failure with exactly that text. */
  joke: async function* (call: ToolCall) {
    record(call);
    if (call.arguments['fail']) throw new ToolFailedError(jsonText(call.arguments['fail']));
    yield jokeText(call);
  },
  /** Five chunks, whatever is asked. */
  story: async function* (call: ToolCall) {
    record(call);
    for (const chunk of STORY) {
      await new Promise((r) => setTimeout(r, 5));
      yield chunk;
    }
  },
  /** tg_service.py --tag-in-response, with the tag "toolwire". */
  tagged: async function* (call: ToolCall) {
    record(call);
    yield `${jokeText(call)} [toolwire]`;
  },
};

// One toolwire app serves every service of these tests, each on topics of its own.
const id = suffix();
const T = {
  joke: { id: `tw-tg-joke-${id}`, topic: `tw-tg-joke-${id}` },
  multi: { id: `tw-tg-multi-${id}`, topic: `tw-tg-multi-${id}` },
  story: { id: `tw-tg-story-${id}`, topic: `tw-tg-story-${id}` },
  shared: { id: `tw-tg-shared-${id}`, topic: `tw-tg-shared-${id}` },
};
/** Persistent queues: an agent takes its queues from the descriptor, a DynamicToolService cannot. */
const durable = serviceDescriptor(
  `tw-tg-durable-${id}`,
  { 'config-params': ['style'], plugin: { kind: 'test', behaviour: 'joke' } },
  { responses: 'persistent' },
);
const DURABLE = { id: durable.id, requestQueue: durable['request-queue'], responseQueue: durable['response-queue'] };

/** A tool-service descriptor on the topics a DynamicToolService with `-t <topic>` uses. */
function service(t: { id: string; topic: string }, extra: Partial<ServiceDescriptor>): ServiceDescriptor {
  return serviceDescriptor(t.id, { 'request-queue': request(t.topic), 'response-queue': response(t.topic), ...extra });
}

let python: string;
let app: App | undefined;
let agent: Transport | undefined;
let client: ToolClient | undefined;
const dirs: string[] = [];
const pythonServices: PythonToolService[] = [];
const children: ChildProcess[] = [];
const { log, lines: logLines } = captureLogger('warn');

beforeAll(async () => {
  python = await interopPython();
  const configDir = await writeConfigDir({
    services: [
      service(T.joke, { 'config-params': [{ name: 'style', required: false }], plugin: { kind: 'test', behaviour: 'joke' } }),
      // Single mode (the default): a tool's chunks are joined into one answer.
      service(T.multi, { plugin: { kind: 'test', behaviour: 'story' } }),
      // Stream mode asked for by the descriptor: TrustGraph's client cannot set toolwire-stream.
      service(T.story, { stream: 'stream', plugin: { kind: 'test', behaviour: 'story' } }),
      service(T.shared, { 'config-params': [{ name: 'style', required: false }], plugin: { kind: 'test', behaviour: 'tagged' } }),
      durable,
    ],
    tools: [
      toolDescriptor('tell-pun', T.joke.id, {
        description: 'A pun on a topic',
        style: 'pun',
        arguments: [{ name: 'topic', type: 'string', description: 'The topic' }],
      }),
    ],
  });
  dirs.push(configDir);
  app = await startPulsarApp({ adminUrl, configDir, log, registry: testRegistry(behaviours) });
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
}, 300_000);

afterAll(async () => {
  // Python services first: the last consumer of a TrustGraph service unsubscribes when it stops.
  for (const s of pythonServices) await s.stop();
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const closed = new Promise((resolve) => c.once('close', resolve));
    c.kill('SIGTERM');
    await closed;
  }
  await client?.close();
  await agent?.close();
  await app?.stop();
  for (const t of [DURABLE.requestQueue, DURABLE.responseQueue]) await deleteTopic(adminUrl, t);
  for (const d of dirs) await removeDir(d);
}, 60_000);

describe("TrustGraph's ToolServiceClient (trustgraph-base 2.11.1) -> toolwire worker", () => {
  it('call() gets the answer; the batched, Python-encoded request (non-ASCII escaped, no user) decodes exactly', async () => {
    const topic = 'café ☕ — 日本語 "quoted" \\ back';
    const before = seen.length;
    const r = await tgCall({ python, pulsarUrl, ...queues(T.joke.topic), config: { style: 'pun' }, arguments: { topic } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([{ result: `pun joke about ${topic}` }]);
    const mine = seen.slice(before);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ service: T.joke.id, config: { style: 'pun' }, arguments: { topic }, user: undefined });
    expect(mine[0]?.requestId).toMatch(UUID);
  });

  it("delivers a tool failure as the client's exception carrying toolwire's message", async () => {
    const message = 'no jokes today: the "comedian" is out ☹';
    const r = await tgCall({ python, pulsarUrl, ...queues(T.joke.topic), config: { style: 'pun' }, arguments: { topic: 'x', fail: message } });
    expect(r.code).toBe(3);
    expect(r.lines).toEqual([{ error: message }]);
  });

  it("delivers toolwire's own refusal (no tool has that config) the same way", async () => {
    const r = await tgCall({ python, pulsarUrl, ...queues(T.joke.topic), config: { style: 'limerick' }, arguments: { topic: 'x' } });
    expect(r.code).toBe(3);
    expect(r.lines).toEqual([{ error: `no tool of service ${T.joke.id} has config {"style":"limerick"}` }]);
  });

  it('answers many calls made at once (the Python producer batches them into few messages), warning-free', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const r = await tgCall({ python, pulsarUrl, ...queues(T.joke.topic), config: { style: 'pun' }, arguments: { topic: 'n' }, count: 12, parallel: true });
      expect(r.code, r.stderr).toBe(0);
      expect(results(r.lines)).toEqual(Array.from({ length: 12 }, () => 'pun joke about n'));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    // More than 10 requests in flight is normal for a worker, not a listener leak.
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });

  it('call() works on persistent queues too, when the descriptor names them', async () => {
    const r = await tgCall({
      python,
      pulsarUrl,
      requestQueue: DURABLE.requestQueue,
      responseQueue: DURABLE.responseQueue,
      config: { style: 'dry' },
      arguments: { topic: 'disks' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([{ result: 'dry joke about disks' }]);
  });

  it('call() gets a multi-chunk tool whole from a single-mode service (the default)', async () => {
    const r = await tgCall({ python, pulsarUrl, ...queues(T.multi.topic) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([{ result: STORY.join('') }]);
  });

  it('call_streaming() receives exactly the chunks the tool yielded, in order, from a "stream" service', async () => {
    const r = await tgCall({ python, pulsarUrl, ...queues(T.story.topic), streaming: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([...STORY.map((chunk) => ({ chunk })), { result: STORY.join('') }]);
  });

  it('call() on a "stream" service gets only the first chunk: why single is the default', async () => {
    const r = await tgCall({ python, pulsarUrl, ...queues(T.story.topic) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([{ result: STORY[0] }]);
  });

  it('answers a malformed request under its id with an invalid-request error', async () => {
    const collector = await ResponseCollector.on(agent!, response(T.joke.topic));
    try {
      const producer = await agent!.producer(request(T.joke.topic));
      await producer.send({ data: 'not json {', properties: { id: 'bad-json-1' } });
      await producer.send({ data: '{"config": "{style", "arguments": "{}"}', properties: { id: 'bad-config-1' } });
      const [notJson] = await collector.final('bad-json-1', 15_000);
      const [badConfig] = await collector.final('bad-config-1', 15_000);
      expect(notJson?.error?.type).toBe('invalid-request');
      expect(notJson?.error?.message).toMatch(/^request payload is not JSON: /);
      expect(notJson?.endOfStream).toBe(true);
      expect(badConfig?.error?.type).toBe('invalid-request');
      expect(badConfig?.error?.message).toMatch(/^request field "config" is not valid JSON: /);
      // ToolClient (the agent side in TypeScript) reads such an answer as a thrown error.
      await expect(client!.call({ ...queues(T.joke.topic), config: { style: 'limerick' }, arguments: {}, timeoutMs: 15_000 })).rejects.toBeInstanceOf(
        ToolResponseError,
      );
    } finally {
      await collector.close();
    }
  });

  it("the stock 2.11.1 agent cannot build its tool-service client: 'ToolServiceClient() takes no arguments'", async () => {
    // trustgraph-flow's agent/react/tools.py ToolServiceImpl, exactly as its agents call it.
    const code = [
      'import asyncio, types',
      'from trustgraph.agent.react.tools import ToolServiceImpl',
      "proc = types.SimpleNamespace(id='agent', pubsub=None, tool_service_clients={})",
      "impl = ToolServiceImpl(None, 'non-persistent://tg/request/x', 'non-persistent://tg/response/x', {'style': 'pun'}, [], proc)",
      'try:',
      "    asyncio.run(impl.invoke(topic='cats'))",
      "    print('no error')",
      'except TypeError as e:',
      "    print('TypeError: ' + str(e))",
    ].join('\n');
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(python, ['-c', code], { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (text += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
      child.once('error', reject);
      child.once('close', (c) => (c === 0 ? resolve(text.trim()) : reject(new Error(`python exited ${c}: ${err}`))));
    });
    expect(out).toBe('TypeError: ToolServiceClient() takes no arguments');
  });
});

describe('toolwire call (CLI, broker mode) -> TrustGraph services', () => {
  async function cliConfig(serviceId: string, topic: string, tool: string, style: string): Promise<string> {
    const dir = await writeConfigDir({
      services: [service({ id: serviceId, topic }, { 'config-params': [{ name: 'style', required: false }] })],
      tools: [toolDescriptor(tool, serviceId, { description: 'd', style, arguments: [{ name: 'topic', type: 'string', description: 't' }] })],
    });
    dirs.push(dir);
    return dir;
  }
  const broker = (dir: string) => ['--pulsar-url', pulsarUrl, '--admin-url', adminUrl, '--config-dir', dir, '--timeout-ms', '30000'];

  it("prints the answer of a DynamicToolService subclass, sending the tool's config values", async () => {
    const topic = `tw-cli-py-${suffix()}`;
    const svc = await PythonToolService.start({ python, pulsarUrl, id: `tw-cli-py-${suffix()}`, topic });
    pythonServices.push(svc);
    const dir = await cliConfig('py-joke-service', topic, 'py-joke', 'dad');

    const r = await runCli(['call', 'py-joke', '--args', '{"topic": "llamas ☕"}', ...broker(dir)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('dad joke about llamas ☕\n');
    expect(svc.requests()).toHaveLength(1);
    expect(svc.requests()[0]).toMatchObject({ config: { style: 'dad' }, arguments: { topic: 'llamas ☕' } });
    expect(svc.requests()[0]?.request_id).toMatch(UUID);
  });

  it("exits 1 with the Python service's error message", async () => {
    const topic = `tw-cli-py-${suffix()}`;
    pythonServices.push(await PythonToolService.start({ python, pulsarUrl, id: `tw-cli-py-${suffix()}`, topic }));
    const dir = await cliConfig('py-joke-service', topic, 'py-joke', 'dad');

    const r = await runCli(['call', 'py-joke', '--args', '{"fail": "the llama ate the punchline"}', ...broker(dir)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('tool-service-error: the llama ate the punchline\n');
    expect(r.stdout).toBe('');
  });

  it("prints a joke from trustgraph-flow's stock joke-service", async () => {
    const topic = `tw-cli-joke-${suffix()}`;
    const serviceId = `tw-joke-service-${suffix()}`;
    const child = spawn(
      venvScript(python, 'joke-service'),
      ['--id', serviceId, '-t', topic, '-p', pulsarUrl, '--no-metrics', '--no-loki-enabled', '-l', 'WARNING'],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    );
    children.push(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-10_000)));
    // It prints nothing when ready: its subscription showing on the broker is the sign.
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`joke-service exited with ${child.exitCode}:\n${stderr}`);
        return (await topicSubscriptions(adminUrl, request(topic)))[`${serviceId}-request`] !== undefined;
      },
      60_000,
      'joke-service subscribing',
      250,
    );
    const dir = await cliConfig(serviceId, topic, 'stock-joke', 'dad-joke');

    const r = await runCli(['call', 'stock-joke', '--args', '{"topic": "programming"}', ...broker(dir)]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Here's a dad-joke for you:\n\n\S[^]*\n$/);
  });
});

describe('a toolwire worker and a TrustGraph service on one Shared subscription', () => {
  it('share the load: every request answered exactly once, by both sides, and the worker outlives the Python service', async () => {
    const subscription = `${T.shared.id}-request`;
    // The worker subscribed in beforeAll (on pulsar-ws, one consumer per 1000 of its
    // non-persistent prefetch); the Python service joins the same subscription.
    const workerConsumers = (await topicSubscriptions(adminUrl, request(T.shared.topic)))[subscription]?.consumers?.length ?? 0;
    expect(workerConsumers).toBeGreaterThan(0);
    const py = await PythonToolService.start({ python, pulsarUrl, id: T.shared.id, topic: T.shared.topic, tag: 'python', tagInResponse: true });
    pythonServices.push(py);
    // Broker stats trail what the clients did: polled, with a deadline.
    await waitUntil(
      async () => (await topicSubscriptions(adminUrl, request(T.shared.topic)))[subscription]?.consumers?.length === workerConsumers + 1,
      15_000,
      'the Python service on the subscription',
    );
    expect((await topicSubscriptions(adminUrl, request(T.shared.topic)))[subscription]?.type).toBe('Shared');

    const before = seen.filter((s) => s.service === T.shared.id).length;
    // One call after another, so that each request is a message of its own (a Python producer
    // batch goes to one consumer).
    const n = 60;
    const r = await tgCall({ python, pulsarUrl, ...queues(T.shared.topic), config: { style: 'pun' }, arguments: { topic: 'load' }, count: n, timeoutS: 15 });
    expect(r.code, r.stderr).toBe(0);
    const answers = results(r.lines);
    expect(answers).toHaveLength(n);
    const byPython = answers.filter((a) => a === 'pun joke about load [python]').length;
    const byToolwire = answers.filter((a) => a === 'pun joke about load [toolwire]').length;
    expect(byPython + byToolwire).toBe(n);

    const toolwireIds = seen
      .filter((s) => s.service === T.shared.id)
      .slice(before)
      .map((s) => s.requestId);
    const pythonIds = py.requests().map((e) => e.request_id ?? '');
    expect(toolwireIds).toHaveLength(byToolwire);
    expect(pythonIds).toHaveLength(byPython);
    expect(new Set([...toolwireIds, ...pythonIds]).size).toBe(n);
    expect(byPython, 'the Python service answered some').toBeGreaterThan(0);
    expect(byToolwire, 'the toolwire worker answered some').toBeGreaterThan(0);

    // The Python service stops first: its unsubscribe is refused while the worker is still
    // connected, so the subscription, and the service, live on.
    const stopped = await py.stop();
    expect(stopped.code, stopped.stderr).toBe(0);
    const after = await tgCall({ python, pulsarUrl, ...queues(T.shared.topic), config: { style: 'pun' }, arguments: { topic: 'after' } });
    expect(after.lines).toEqual([{ result: 'pun joke about after [toolwire]' }]);
    await waitUntil(
      async () => (await topicSubscriptions(adminUrl, request(T.shared.topic)))[subscription]?.consumers?.length === workerConsumers,
      15_000,
      "only the worker's consumers left",
    );
  });
});

describe('worker log', () => {
  it('logged no error while TrustGraph peers talked to it', () => {
    expect(logLines().filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
  });
});
