/**
 * Delivery on TrustGraph's default topic kind, against the real broker and TrustGraph's own
 * Python client and joke-service: bursts published at once (unbatched, and batched as
 * TrustGraph's producers do) are all answered; a burst larger than TrustGraph's receiver
 * queue is answered at least as fully as by TrustGraph's service, side by side; a retriable
 * failure is answered rather than nacked into nothing; a nack of one message of a batch does
 * not run its batch-mates again; and an agent's response subscription leaves nothing behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient, ToolResponseError } from '../../src/client/tool-client.js';
import { UnavailableError } from '../../src/errors.js';
import { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import { droppedAtBroker } from '../../bench/broker-drops.js';
import type { ToolCall } from '../../src/plugins/plugin.js';
import type { Transport } from '../../src/transport/transport.js';
import { captureLogger, testRegistry } from '../support/harness.js';
import { deleteTopic, removeDir, startPulsarApp, suffix, topicSubscriptions, waitUntil, writeConfigDir, brokerTransport } from '../support/pulsar-app.js';
import { burst, interopPython, venvScript } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const { log } = captureLogger('warn');

const q = (kind: 'request' | 'response', name: string) => `non-persistent://tg/${kind}/${name}-${tag}`;
const batchTopic = `persistent://tg/flow/batch-${tag}`;
const clientTopic = `persistent://tg/flow/client-answers-${tag}`;

/** Tool runs per request id, for the batch test. */
const runs = new Map<string, number>();
let failedOnce = false;

let python: string;
let app: App;
let dir: string;
let agent: Transport;
let tgJoke: ChildProcess | undefined;

beforeAll(async () => {
  python = await interopPython();
  dir = await writeConfigDir({
    services: [
      // As the example joke service: TrustGraph's topics, concurrency 8.
      {
        id: 'joke-service',
        'request-queue': q('request', 'joke'),
        'response-queue': q('response', 'joke'),
        'config-params': [{ name: 'style' }],
        plugin: { kind: 'module', module: 'builtin:joke' },
        concurrency: 8,
      },
      { id: 'flaky-service', 'request-queue': q('request', 'flaky'), 'response-queue': q('response', 'flaky'), plugin: { kind: 'test', behaviour: 'down' } },
      {
        id: 'batch-service',
        'request-queue': batchTopic,
        'response-queue': q('response', 'batch'),
        plugin: { kind: 'test', behaviour: 'counted' },
        concurrency: 8,
      },
    ],
    tools: [
      { type: 'tool-service', name: 'tell-joke', description: 'A joke', service: 'joke-service', style: 'pun', arguments: [{ name: 'topic', type: 'string' }] },
      { type: 'tool-service', name: 'flaky', description: 'Always down', service: 'flaky-service', arguments: [] },
      { type: 'tool-service', name: 'counted', description: 'Counts its runs', service: 'batch-service', arguments: [] },
    ],
  });
  const registry = testRegistry({
    down: () =>
      (async function* () {
        yield* [];
        throw new UnavailableError('the backend is down');
      })(),
    counted: (call: ToolCall) =>
      (async function* () {
        runs.set(call.requestId, (runs.get(call.requestId) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 5));
        // The first request taken fails once: the broker redelivers its whole batch.
        if (!failedOnce) {
          failedOnce = true;
          throw new UnavailableError('try again');
        }
        yield 'counted';
      })(),
  });
  app = await startPulsarApp({ adminUrl, configDir: dir, log, registry, limits: { nackDelayMs: 200 } });
  agent = await brokerTransport(adminUrl, log);
}, 300_000);

afterAll(async () => {
  tgJoke?.kill('SIGTERM');
  await agent?.close();
  await app?.stop(1_000);
  await deleteTopic(adminUrl, batchTopic);
  await deleteTopic(adminUrl, clientTopic);
  await removeDir(dir);
});

/** The joke topics' counters at the broker (the agent's subscription is gone once its burst is over). */
async function brokerCounts(): Promise<{ requestsDropped: number; answersPublished: number }> {
  const admin = new PulsarAdminClient(adminUrl);
  const [requestsDropped, responses] = await Promise.all([droppedAtBroker(admin, q('request', 'joke')), admin.topicStats(q('response', 'joke'))]);
  if (requestsDropped === undefined) throw new Error("the broker has no stats for the worker's joke subscription");
  // No response topic yet: nothing was answered on it.
  return { requestsDropped, answersPublished: responses?.msgInCounter ?? 0 };
}

const jokeBurst = (count: number, batched: boolean, name = 'joke') =>
  burst({
    python,
    pulsarUrl,
    requestQueue: q('request', name),
    responseQueue: q('response', name),
    count,
    batched,
    config: { style: 'pun' },
    arguments: { topic: 'cats' },
  });

describe('a burst on a non-persistent request topic', () => {
  it.each([false, true])('is answered whole: 500 requests published at once (batched: %s)', async (batched) => {
    const before = await brokerCounts();
    const r = await jokeBurst(500, batched);
    const after = await brokerCounts();
    // The broker's counters say where a missing answer was lost: a request the worker never
    // got, or an answer it published that the agent did not get.
    const delivery = { requestsDropped: after.requestsDropped - before.requestsDropped, answersPublished: after.answersPublished - before.answersPublished };
    expect({ ...r, ...delivery }).toMatchObject({ sent: 500, answered: 500, missing: 0, errors: {}, requestsDropped: 0, answersPublished: 500 });
  });

  it('of 2000 is answered at least as fully as TrustGraph’s joke-service answers it', async () => {
    const id = `tg-joke-${tag}`;
    tgJoke = spawn(
      venvScript(python, 'joke-service'),
      ['--id', id, '-t', `tgjoke-${tag}`, '-p', pulsarUrl, '--concurrency', '8', '--no-metrics', '--no-loki-enabled', '-l', 'WARNING'],
      {
        stdio: 'ignore',
      },
    );
    await waitUntil(async () => (await topicSubscriptions(adminUrl, q('request', 'tgjoke')))[`${id}-request`] !== undefined, 60_000, 'joke-service subscribed');
    const theirs = await jokeBurst(2000, false, 'tgjoke');
    const ours = await jokeBurst(2000, false);
    console.log(`unbatched burst of 2000 answered: toolwire ${ours.answered}, TrustGraph joke-service ${theirs.answered}`);
    expect(theirs.answered).toBeGreaterThan(0);
    expect(ours.answered).toBeGreaterThanOrEqual(theirs.answered);
    expect(ours.errors).toEqual({});
  }, 180_000);
});

describe('a retriable failure on a non-persistent request topic', () => {
  it('reaches the agent as an error at once; a nack there would lose the request', async () => {
    const client = new ToolClient(agent, log);
    try {
      const call = client.call({ requestQueue: q('request', 'flaky'), responseQueue: q('response', 'flaky'), config: {}, arguments: {}, timeoutMs: 10_000 });
      await expect(call).rejects.toBeInstanceOf(ToolResponseError);
      await expect(call).rejects.toMatchObject({ type: 'unavailable', message: 'the backend is down' });
    } finally {
      await client.close();
    }
  });
});

describe('a nack of one request of a batch', () => {
  it('does not run the batch’s other requests again', async () => {
    const r = await burst({ python, pulsarUrl, requestQueue: batchTopic, responseQueue: q('response', 'batch'), count: 50, batched: true, waitS: 30 });
    expect(r).toMatchObject({ sent: 50, answered: 50, errors: {} });
    const counts = [...runs.values()].sort((a, b) => a - b);
    // One request failed once and ran twice; every other ran once.
    expect(counts).toEqual([...Array<number>(49).fill(1), 2]);
  }, 120_000);
});

describe('ToolClient on a persistent response topic', () => {
  it('leaves no subscription behind when it closes', async () => {
    const client = new ToolClient(agent, log);
    await client
      .call({ requestQueue: `persistent://tg/flow/nobody-${tag}`, responseQueue: clientTopic, config: {}, arguments: {}, timeoutMs: 500 })
      .catch(() => undefined);
    const open = Object.keys(await topicSubscriptions(adminUrl, clientTopic)).filter((s) => s.startsWith('toolwire-client-'));
    expect(open).toHaveLength(1);
    await client.close();
    await waitUntil(
      async () => Object.keys(await topicSubscriptions(adminUrl, clientTopic)).every((s) => !s.startsWith('toolwire-client-')),
      10_000,
      'client subscription gone',
    );
  });
});
