/**
 * The worker end to end on the pulsar-ws transport against the real broker: the shipped
 * example descriptors (config/) on topics of this run, answered through ToolClient; single
 * and stream modes; malformed and id-less requests; and `toolwire call` through the gateway
 * of a `toolwire run` process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient, ToolResponseError, type CallOptions } from '../../src/client/tool-client.js';
import type { ToolResponse } from '../../src/envelope/response.js';
import { JOKES } from '../../src/plugins/module/builtin/joke.js';
import type { IncomingMessage, Subscription, Transport } from '../../src/transport/transport.js';
import { DEAD_LETTER_REASON_PROPERTY } from '../../src/envelope/properties.js';
import { runCli } from '../support/cli.js';
import { serviceDescriptor, toolDescriptor } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { deleteTopic, removeDir, startPulsarApp, suffix, waitUntil, writeConfigDir, brokerTransport } from '../support/pulsar-app.js';
import { ResponseCollector } from '../support/worker-fixture.js';
import { loadPulsarClient } from '../../src/transport/pulsar-native-client.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLES = join(REPO, 'config');

/**
 * The example descriptors with `-<tag>` appended to every queue name (both forms end with the
 * topic's local name), so this run meets no other worker on the shared broker; plus one
 * service that streams by descriptor.
 */
async function exampleConfig(tag: string): Promise<string> {
  const services: Record<string, unknown>[] = await Promise.all(
    (await readdir(join(EXAMPLES, 'tool-service'))).map(async (f) => {
      const s = JSON.parse(await readFile(join(EXAMPLES, 'tool-service', f), 'utf8')) as Record<string, unknown>;
      return { ...s, 'request-queue': `${String(s['request-queue'])}-${tag}`, 'response-queue': `${String(s['response-queue'])}-${tag}` };
    }),
  );
  services.push(
    serviceDescriptor('echo-stream-service', { plugin: { kind: 'module', module: 'builtin:echo' }, stream: 'stream' }, { requests: 'non-persistent', tag }),
  );
  const dir = await writeConfigDir({
    services,
    tools: [
      toolDescriptor('echo-stream', 'echo-stream-service', {
        description: 'Echo, streamed',
        arguments: [
          { name: 'text', type: 'string' },
          { name: 'chunks', type: 'number' },
        ],
      }),
    ],
  });
  for (const f of await readdir(join(EXAMPLES, 'tool'))) await writeFile(join(dir, 'tool', f), await readFile(join(EXAMPLES, 'tool', f)));
  return dir;
}

const tag = suffix();
const { log, lines: logLines } = captureLogger('warn');
const dirs: string[] = [];
const persistentTopics: string[] = [];
let app: App;
let agent: Transport;
let client: ToolClient;

beforeAll(async () => {
  const dir = await exampleConfig(tag);
  dirs.push(dir);
  app = await startPulsarApp({ adminUrl, configDir: dir, log });
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
  for (const s of app.catalog.services.values()) if (s.requestQueue.startsWith('persistent://')) persistentTopics.push(s.requestQueue);
});

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await app?.stop();
  for (const t of persistentTopics) await deleteTopic(adminUrl, t);
  for (const d of dirs) await removeDir(d);
});

/** A tool's queues and config values from the catalog, as an agent holding the descriptors has them. */
function target(tool: string): Pick<CallOptions, 'requestQueue' | 'responseQueue' | 'config'> {
  const t = app.catalog.tools.get(tool);
  const s = t && app.catalog.services.get(t.service);
  if (!t || !s) throw new Error(`no tool ${tool}`);
  return { requestQueue: s.requestQueue, responseQueue: s.responseQueue, config: { ...t.config } };
}

async function all(stream: AsyncIterable<ToolResponse>): Promise<ToolResponse[]> {
  const out: ToolResponse[] = [];
  for await (const r of stream) out.push(r);
  return out;
}

async function next(sub: Subscription, timeoutMs: number): Promise<IncomingMessage> {
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([
    sub[Symbol.asyncIterator]().next(),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no message on ${sub.topic} within ${timeoutMs} ms`)), timeoutMs))),
  ]).finally(() => clearTimeout(timer));
  if (r.done) throw new Error(`${sub.topic} ended`);
  return r.value;
}

describe('the example tools on pulsar-ws, through ToolClient', () => {
  it('answers each example tool, short-form and full queue names alike', async () => {
    expect(
      app.worker
        .served()
        .map((s) => s.id)
        .sort(),
    ).toEqual(['calculator-service', 'echo-service', 'echo-stream-service', 'joke-service', 'time-service']);
    expect(target('calculate').requestQueue).toBe(`non-persistent://tg/request/calculator-${tag}`);

    const call = (tool: string, args: Record<string, unknown>) => client.call({ ...target(tool), arguments: args, timeoutMs: 20_000 });
    const [pun, dad, sum, time, echo] = await Promise.all([
      call('tell-joke', { topic: 'programming' }),
      call('tell-dad-joke', { topic: 'cats' }),
      call('calculate', { expression: '(2 + 3) * 4' }),
      call('current-time', {}),
      call('echo', { text: 'héllo ☕ "there"' }),
    ]);
    expect(JOKES.pun.programming).toContain(pun);
    expect(JOKES['dad-joke'].animals).toContain(dad);
    expect(sum).toBe('20');
    expect(time).toMatch(/^It is \d\d:\d\d on \d{4}-\d\d-\d\d in UTC \(UTC\+00:00\)\.$/);
    expect(echo).toBe('héllo ☕ "there"');
  });

  it('answers a tool error as an error response the client throws', async () => {
    const err = await client.call({ ...target('calculate'), arguments: { expression: '1 +' }, timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolResponseError);
    expect((err as ToolResponseError).type).toBe('invalid-arguments');
    expect((err as ToolResponseError).message).toBe('cannot evaluate "1 +": unexpected end at position 3');
  });

  it('single mode (the default) sends one message holding every chunk', async () => {
    const rs = await all(client.stream({ ...target('echo'), arguments: { text: 'ab', chunks: 3 }, timeoutMs: 20_000 }));
    expect(rs).toEqual([{ error: null, response: 'ababab', endOfStream: true }]);
  });

  it('stream mode, asked for by the toolwire-stream property, sends each chunk and then an empty final message', async () => {
    const rs = await all(client.stream({ ...target('echo'), arguments: { text: 'ab', chunks: 3 }, stream: true, timeoutMs: 20_000 }));
    const chunk = { error: null, response: 'ab', endOfStream: false };
    expect(rs).toEqual([chunk, chunk, chunk, { error: null, response: '', endOfStream: true }]);
  });

  it('stream mode, asked for by the descriptor, streams without the property', async () => {
    const rs = await all(client.stream({ ...target('echo-stream'), arguments: { text: 'é', chunks: 2 }, timeoutMs: 20_000 }));
    expect(rs.map((r) => [r.response, r.endOfStream])).toEqual([
      ['é', false],
      ['é', false],
      ['', true],
    ]);
  });

  it('answers a malformed request with an invalid-request error under its id', async () => {
    const { requestQueue, responseQueue } = target('echo');
    const collector = await ResponseCollector.on(agent, responseQueue);
    try {
      const id = `malformed-${suffix()}`;
      await (await agent.producer(requestQueue)).send({ data: Buffer.from([0x7b, 0xff, 0xfe]), properties: { id } });
      const [r, ...more] = await collector.final(id, 20_000);
      expect(more).toEqual([]);
      expect(r).toEqual({ error: { type: 'invalid-request', message: 'request payload is not valid UTF-8' }, response: '', endOfStream: true });
    } finally {
      await collector.close();
    }
  });

  it('dead-letters a request without an id to <topic>-<subscription>-DLQ, unchanged and with the reason', async () => {
    const echo = app.catalog.services.get('echo-service')!;
    const dlqTopic = `${echo.requestQueue}-${echo.subscription}-DLQ`;
    expect(dlqTopic).toBe(`persistent://tg/flow/echo-request-${tag}-echo-service-request-DLQ`);
    persistentTopics.push(dlqTopic);
    const dlq = await agent.subscribe({ topic: dlqTopic, subscription: 'inspect' });
    try {
      const before = app.worker.stats().deadLettered;
      const body = '{"config": "{}", "arguments": "{\\"text\\": \\"nobody asked\\"}"}';
      await (await agent.producer(echo.requestQueue)).send({ data: body, properties: { trace: 't-1' } });
      const m = await next(dlq, 20_000);
      await m.ack();
      expect(m.data.toString('utf8')).toBe(body);
      expect(m.properties['trace']).toBe('t-1');
      expect(m.properties[DEAD_LETTER_REASON_PROPERTY]).toBe('request has no id property; no agent could receive an answer');
      // The worker counts it once its ack of the request returns, which may be after the
      // dead letter reaches this reader.
      await vi.waitFor(() => expect(app.worker.stats().deadLettered).toBe(before + 1), { timeout: 10_000 });
    } finally {
      await dlq.close();
    }
  });

  it('logged no error', () => {
    expect(logLines().filter((l) => (JSON.parse(l) as { level: number }).level >= 50)).toEqual([]);
  });
});

describe('toolwire call -> the gateway of a `toolwire run` process on the broker', () => {
  let child: ChildProcess | undefined;
  let stderr = '';
  let base = '';

  beforeAll(async () => {
    const bin = join(REPO, 'bin/toolwire.js');
    if (!existsSync(join(REPO, 'dist/main.js'))) throw new Error('dist/ is not built: run `npm run build` (npm test does it first)');
    const dir = await exampleConfig(`${tag}-run`);
    dirs.push(dir);
    child = spawn(
      process.execPath,
      [bin, 'run', '--pulsar-url', pulsarUrl, '--admin-url', adminUrl, '--config-dir', dir, '--http-port', '0', '--log-format', 'json'],
      {
        cwd: REPO,
        env: { ...process.env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-200_000)));
    let serving: { transport?: string; http?: string } | undefined;
    await waitUntil(
      () => {
        if (child?.exitCode !== null) throw new Error(`toolwire run exited with ${child?.exitCode}:\n${stderr.slice(-3000)}`);
        serving = stderr
          .split('\n')
          .filter((l) => l.includes('"toolwire is serving"'))
          .map((l) => JSON.parse(l) as { transport?: string; http?: string })[0];
        return serving !== undefined;
      },
      60_000,
      'toolwire run serving',
    );
    // No --transport: auto picks the native client where pulsar-client loads, else the WebSocket API.
    expect(serving?.transport).toBe(
      await loadPulsarClient().then(
        () => 'pulsar',
        () => 'pulsar-ws',
      ),
    );
    base = serving!.http!;
    persistentTopics.push(`persistent://tg/flow/echo-request-${tag}-run`);
    const ready = await fetch(`${base}/readyz`);
    expect(await ready.json()).toEqual({
      status: 'ready',
      worker: 'running',
      transport: 'connected',
      config: {
        source: expect.stringMatching(/^directory /),
        version: expect.stringMatching(/^[0-9a-f]{12}$/),
        appliedAt: expect.any(String),
        reloads: { applied: 1, rejected: 0, failed: 0 },
      },
    });
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const closed = new Promise((resolve) => child!.once('close', resolve));
      child.kill('SIGKILL');
      await closed;
    }
  });

  it('prints a joke, a streamed echo, and exits 1 with the error of a failing tool', async () => {
    const joke = await runCli(['call', 'tell-joke', '--args', '{"topic": "cats"}', '--url', base]);
    expect(joke.stderr).toBe('');
    expect(joke.code).toBe(0);
    expect((JOKES.pun.animals ?? []).map((j) => `${j}\n`)).toContain(joke.stdout);

    const echo = await runCli(['call', 'echo', '--stream', '--args', '{"text": "x☕", "chunks": 3}', '--url', base]);
    expect(echo.code).toBe(0);
    expect(echo.stdout).toBe('x☕x☕x☕\n');

    const bad = await runCli(['call', 'calculate', '--args', '{"expression": "2 ^ (1"}', '--url', base]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('invalid-arguments: cannot evaluate "2 ^ (1": expected ) at position 6\n');
  });

  it('stops cleanly on SIGTERM', async () => {
    const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child!.once('close', (code, signal) => resolve({ code, signal })),
    );
    child!.kill('SIGTERM');
    // The signal, if any, tells a native crash (SIGSEGV, SIGABRT) from a stop that never ran.
    expect(await closed, stderr.slice(-3000)).toEqual({ code: 0, signal: null });
    const levels = stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(levels.filter((l) => l.level >= 50)).toEqual([]);
    expect(levels.map((l) => l.msg)).toContain('stop requested');
  });
});
