/**
 * The Python fixtures proven against each other on the real broker, before any TypeScript is
 * put between them: TrustGraph's own client (tg_call.py) calling a DynamicToolService
 * (tg_service.py), and TrustGraph's stock joke-service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import { PythonToolService, interopPython, startRawResponder, tgCall, uniqueName, venvScript, type CallLine } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let python: string;
const services: PythonToolService[] = [];
const others: ChildProcess[] = [];

beforeAll(async () => {
  python = await interopPython();
}, 300_000);

afterAll(async () => {
  for (const s of services) await s.stop();
  for (const c of others) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const closed = new Promise((resolve) => c.once('close', resolve));
    c.kill('SIGTERM');
    await closed;
  }
});

function queues(topic: string): { requestQueue: string; responseQueue: string } {
  return { requestQueue: `non-persistent://tg/request/${topic}`, responseQueue: `non-persistent://tg/response/${topic}` };
}

async function startService(opts: { id?: string; topic: string; tag?: string; concurrency?: number; tagInResponse?: boolean }): Promise<PythonToolService> {
  const s = await PythonToolService.start({ python, pulsarUrl, id: opts.id ?? uniqueName('tw-svc'), ...opts });
  services.push(s);
  return s;
}

function results(lines: CallLine[]): string[] {
  return lines.flatMap((l) => ('result' in l ? [l.result] : []));
}

describe('TrustGraph client (tg_call.py) -> DynamicToolService (tg_service.py)', () => {
  it('call returns the observation built from config and arguments, with one request per call', async () => {
    const topic = uniqueName('tw-py');
    const service = await startService({ topic });
    const r = await tgCall({ python, pulsarUrl, ...queues(topic), config: { style: 'pun' }, arguments: { topic: 'café ☕' } });

    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([{ result: 'pun joke about café ☕' }]);
    const reqs = service.requests();
    expect(reqs).toHaveLength(1);
    expect(reqs[0]?.request_id).toMatch(UUID);
    expect(reqs[0]?.config).toEqual({ style: 'pun' });
    expect(reqs[0]?.arguments).toEqual({ topic: 'café ☕' });
  });

  it('delivers a tool error as the exception text, exit 3, also with short-form queue names', async () => {
    const topic = uniqueName('tw-py');
    await startService({ topic });
    const r = await tgCall({
      python,
      pulsarUrl,
      requestQueue: `request:tg:${topic}`,
      responseQueue: `response:tg:${topic}`,
      arguments: { fail: 'no jokes today: the "comedian" is out' },
    });
    expect(r.code).toBe(3);
    expect(r.lines).toEqual([{ error: 'no jokes today: the "comedian" is out' }]);
  });

  it('sends a non-string result as its JSON text', async () => {
    const topic = uniqueName('tw-py');
    const service = await startService({ topic });
    const r = await tgCall({ python, pulsarUrl, ...queues(topic), config: { style: 'x' }, arguments: { as_json: true, n: 2 } });
    expect(r.code, r.stderr).toBe(0);
    const [text] = results(r.lines);
    expect(JSON.parse(text ?? 'null')).toEqual({ config: { style: 'x' }, arguments: { as_json: true, n: 2 }, tag: service.tag });
  });

  it('call_streaming gets the one final message as one chunk and the same result', async () => {
    const topic = uniqueName('tw-py');
    await startService({ topic });
    const r = await tgCall({ python, pulsarUrl, ...queues(topic), streaming: true, config: { style: 'dad' }, arguments: { topic: 'llamas' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines).toEqual([{ chunk: 'dad joke about llamas' }, { result: 'dad joke about llamas' }]);
  });

  it('times out (exit 4) when nobody serves the non-persistent request topic: the request is dropped', async () => {
    const topic = uniqueName('tw-py-nobody');
    const r = await tgCall({ python, pulsarUrl, ...queues(topic), timeoutS: 1 });
    expect(r.code).toBe(4);
    expect(r.lines).toEqual([{ timeout: 1 }]);
  });

  it('runs up to --concurrency requests at once in one process', async () => {
    const topic = uniqueName('tw-py');
    const service = await startService({ topic, concurrency: 3 });
    const r = await tgCall({ python, pulsarUrl, ...queues(topic), arguments: { topic: 't', sleep_ms: 400 }, count: 3, parallel: true });
    expect(r.code, r.stderr).toBe(0);
    expect(results(r.lines)).toEqual(['plain joke about t', 'plain joke about t', 'plain joke about t']);
    expect(Math.max(...service.requests().map((e) => e.inflight ?? 0))).toBe(3);
  });

  it('shares the load between two processes with the same id (Shared subscription "<id>-request")', async () => {
    const topic = uniqueName('tw-py');
    const id = uniqueName('tw-shared');
    const a = await startService({ id, topic, tag: 'A', tagInResponse: true });
    const b = await startService({ id, topic, tag: 'B', tagInResponse: true });

    const subs = (await new PulsarAdminClient(adminUrl).topicStats(`non-persistent://tg/request/${topic}`))?.subscriptions;
    expect(subs?.[`${id}-request`]?.type).toBe('Shared');
    expect(subs?.[`${id}-request`]?.consumers).toHaveLength(2);

    // One call after another, so that each request is its own message (the Python producer
    // batches what is sent within 10 ms, and a batch goes to one consumer).
    const r = await tgCall({ python, pulsarUrl, ...queues(topic), arguments: { topic: 'load' }, count: 20 });
    expect(r.code, r.stderr).toBe(0);
    const answers = results(r.lines);
    expect(answers).toHaveLength(20);
    const byA = answers.filter((t) => t === 'plain joke about load [A]').length;
    const byB = answers.filter((t) => t === 'plain joke about load [B]').length;
    expect(byA + byB).toBe(20);
    expect(byA).toBe(a.requests().length);
    expect(byB).toBe(b.requests().length);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
    const ids = [...a.requests(), ...b.requests()].map((e) => e.request_id);
    expect(new Set(ids).size).toBe(20);
  });

  it('stops cleanly on SIGTERM', async () => {
    const topic = uniqueName('tw-py');
    const service = await startService({ topic });
    const r = await service.stop();
    expect(r.code, r.stderr).toBe(0);
    expect(service.events.at(-1)?.event).toBe('stopped');
  });
});

describe("what TrustGraph's client (trustgraph-base 2.11.1) sends, and makes of each answer", () => {
  async function exchange(
    payloads: string[],
    opts: { streaming?: boolean; timeoutS?: number; config?: Record<string, unknown>; arguments?: Record<string, unknown> } = {},
  ) {
    const topic = uniqueName('tw-raw');
    const responder = await startRawResponder({ python, pulsarUrl, topic, payloads });
    const call = await tgCall({ python, pulsarUrl, ...queues(topic), timeoutS: opts.timeoutS ?? 10, ...opts });
    const [request] = await responder.finished;
    return { call, request };
  }
  const final = (text: string): string => JSON.stringify({ error: null, response: text, end_of_stream: true });
  const chunk = (text: string): string => JSON.stringify({ error: null, response: text, end_of_stream: false });

  it('sends double-encoded JSON (Python separators, ASCII escapes) with only the id property, in a producer batch even when alone', async () => {
    const { call, request } = await exchange([final('ok')], { config: { style: 'pun' }, arguments: { topic: 'café' } });
    expect(call.lines).toEqual([{ result: 'ok' }]);
    expect(request?.data).toBe('{"config": "{\\"style\\": \\"pun\\"}", "arguments": "{\\"topic\\": \\"caf\\\\u00e9\\"}"}');
    expect(Object.keys(request?.properties ?? {})).toEqual(['id']);
    expect(request?.properties['id']).toMatch(UUID);
    expect(request?.key).toBe('');
    expect(request?.batched).toBe(true);
  });

  it('sends "{}" for empty config and arguments', async () => {
    const { request } = await exchange([final('ok')]);
    expect(request?.data).toBe('{"config": "{}", "arguments": "{}"}');
  });

  it('call() returns the first message and drops the rest of a stream', async () => {
    const { call } = await exchange([chunk('a'), chunk('b'), final('')]);
    expect(call.code).toBe(0);
    expect(call.lines).toEqual([{ result: 'a' }]);
  });

  it('call_streaming() joins the chunks until end_of_stream', async () => {
    const { call } = await exchange([chunk('a'), chunk('b'), final('')], { streaming: true });
    expect(call.lines).toEqual([{ chunk: 'a' }, { chunk: 'b' }, { result: 'ab' }]);
  });

  it('reads "error": {} as an error with an empty message', async () => {
    const { call } = await exchange(['{"error": {}, "response": "fine", "end_of_stream": true}']);
    expect(call.code).toBe(3);
    expect(call.lines).toEqual([{ error: '' }]);
  });

  it('accepts compact JSON with no error key, and ignores unknown keys', async () => {
    const { call } = await exchange(['{"response":"ok","end_of_stream":true,"extra":{"x":1}}']);
    expect(call.lines).toEqual([{ result: 'ok' }]);
  });

  it('call_streaming() never ends when end_of_stream is missing (it defaults to false)', async () => {
    const { call } = await exchange(['{"error": null, "response": "a"}'], { streaming: true, timeoutS: 2 });
    expect(call.code).toBe(4);
    expect(call.lines).toEqual([{ chunk: 'a' }, { timeout: 2 }]);
  });

  it('a payload that is not JSON leaves the caller waiting until its timeout', async () => {
    const { call } = await exchange(['not json'], { timeoutS: 2 });
    expect(call.code).toBe(4);
    expect(call.lines).toEqual([{ timeout: 2 }]);
    expect(call.stderr).toContain('Response loop error');
  });
});

describe("TrustGraph's stock joke-service (trustgraph-flow)", () => {
  it('answers ToolServiceClient.call with a joke in the requested style', async () => {
    const topic = uniqueName('tw-joke');
    const id = uniqueName('tw-joke-service');
    const child = spawn(venvScript(python, 'joke-service'), ['--id', id, '-t', topic, '-p', pulsarUrl, '--no-metrics', '--no-loki-enabled', '-l', 'WARNING'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
    });
    others.push(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-10_000)));

    // It prints nothing when ready: wait until its subscription shows on the broker.
    const admin = new PulsarAdminClient(adminUrl);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const stats = await admin.topicStats(`non-persistent://tg/request/${topic}`);
      if (stats?.subscriptions[`${id}-request`]) break;
      if (child.exitCode !== null) throw new Error(`joke-service exited with ${child.exitCode}:\n${stderr}`);
      if (Date.now() > deadline) throw new Error(`joke-service did not subscribe within 60 s:\n${stderr}`);
      await new Promise((res) => setTimeout(res, 250));
    }

    const r = await tgCall({ python, pulsarUrl, ...queues(topic), config: { style: 'pun' }, arguments: { topic: 'programming' } });
    expect(r.code, r.stderr).toBe(0);
    const [text] = results(r.lines);
    expect(text).toMatch(/^Here's a pun for you:\n\n\S/);
  });
});
