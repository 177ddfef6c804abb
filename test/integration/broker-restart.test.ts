/**
 * A broker stopped under load and started again: the worker (and the agent's client) reconnect
 * by themselves and every request on a persistent topic is answered.
 *
 * The broker is one of this test's own (scripts/pulsar-broker.sh on free ports, own run dir):
 * the shared broker is never stopped. It is started again with --keep-data, so the persistent
 * request topic, its subscription and the messages waiting in it survive.
 *
 * What counts as correct (delivery on persistent topics is at-least-once):
 * - the agent gets exactly one final answer per request, and it is that request's answer
 *   (ToolClient resolves on the first final message and ignores later ones);
 * - on the wire, a request may be answered more than once only if it was in flight during the
 *   outage: sent before the broker had stopped, and answered after the stop began (less a
 *   second, for acks not yet on the broker's cursor). A request the worker took but had not
 *   acked is redelivered, and a producer resends what the broker had not confirmed, which can
 *   store a request or an answer twice;
 * - a request outside that window is executed once and answered once.
 * Duplicates are counted and reported on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import { OwnBroker } from '../../bench/own-broker.js';
import { decodeResponse } from '../../src/envelope/response.js';
import type { ToolCall } from '../../src/plugins/plugin.js';
import type { Subscription, Transport } from '../../src/transport/transport.js';
import { serviceDescriptor } from '../support/descriptors.js';
import { captureLogger, testRegistry } from '../support/harness.js';
import { removeDir, startPulsarApp, suffix, waitUntil, writeConfigDir, brokerTransport } from '../support/pulsar-app.js';
import { TEST_TRANSPORT } from '../support/transport-under-test.js';

const WAVE = 25;
const WAVES = 12;
const N = WAVE * WAVES;
const ACK_MARGIN_MS = 1_000;

let broker: OwnBroker | undefined;
const workerLog = captureLogger('info');
const agentLog = captureLogger('info');
const executions = new Map<string, number>();
// Persistent both ways: a non-persistent response topic drops the answers sent while the client is away.
const service = serviceDescriptor(
  'restart-service',
  { plugin: { kind: 'test', behaviour: 'slow' }, concurrency: 16 },
  { responses: 'persistent', tag: suffix() },
);
const { 'request-queue': requestQueue, 'response-queue': responseQueue } = service;
let configDir: string | undefined;
let app: App | undefined;
let agent: Transport | undefined;
let client: ToolClient | undefined;
let wire: Subscription | undefined;
/** Final answers seen on the response topic: request id -> broker message id -> response text. */
const finalsById = new Map<string, Map<string, string>>();

async function watchWire(transport: Transport): Promise<Subscription> {
  const sub = await transport.subscribe({ topic: responseQueue, subscription: `wire-${suffix()}` });
  void (async () => {
    for await (const m of sub) {
      await m.ack();
      const r = decodeResponse(m.data);
      if (!r.endOfStream) continue;
      const id = m.properties['id'] ?? '(none)';
      const byMessage = finalsById.get(id) ?? new Map<string, string>();
      // A redelivered copy of one broker message is not a second answer.
      byMessage.set(m.messageId, r.error ? `error: ${r.error.message}` : r.response);
      finalsById.set(id, byMessage);
    }
  })();
  return sub;
}

beforeAll(async () => {
  broker = await OwnBroker.start(AbortSignal.timeout(240_000));
  const { adminUrl, pulsarUrl } = broker.endpoints;
  configDir = await writeConfigDir({
    services: [service],
  });
  const registry = testRegistry({
    slow: async function* (call: ToolCall) {
      executions.set(call.requestId, (executions.get(call.requestId) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 20));
      yield `answer ${String(call.arguments['n'])}`;
    },
  });
  app = await startPulsarApp({ adminUrl, pulsarUrl, configDir, log: workerLog.log, registry, limits: { nackDelayMs: 200 } });
  // The agent is willing to wait out the outage: its sends stay queued until the broker is back.
  agent = await brokerTransport(adminUrl, agentLog.log, { sendTimeoutMs: 150_000 }, pulsarUrl);
  client = new ToolClient(agent, agentLog.log);
  wire = await watchWire(agent);
}, 240_000);

afterAll(async () => {
  await wire?.close().catch(() => undefined);
  await client?.close();
  await agent?.close();
  await app?.stop(1_000);
  await removeDir(configDir);
  await broker?.destroy();
}, 120_000);

interface Outcome {
  readonly n: number;
  readonly sentAt: number;
  readonly settledAt: number;
  readonly answer?: string;
  readonly error?: string;
}

describe('a broker stopped under load and started again', () => {
  it('the worker reconnects by itself and every request on a persistent topic gets one final answer', async () => {
    const calls: Promise<Outcome>[] = [];
    const ids = new Map<number, string>();
    const sendWave = (w: number): void => {
      for (let i = 0; i < WAVE; i++) {
        const n = w * WAVE + i;
        const sentAt = Date.now();
        calls.push(
          client!.call({ requestQueue, responseQueue, config: {}, arguments: { n }, timeoutMs: 180_000 }).then(
            (answer) => ({ n, sentAt, settledAt: Date.now(), answer }),
            (err: unknown) => ({ n, sentAt, settledAt: Date.now(), error: (err as Error).message }),
          ),
        );
      }
    };
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

    // Up: four waves.
    for (let w = 0; w < 4; w++) {
      sendWave(w);
      await pause(300);
    }
    // Stopping: two waves while the broker shuts down, two once it is down.
    const stopBeganAt = Date.now();
    const stopping = broker!.stop();
    sendWave(4);
    await pause(500);
    sendWave(5);
    await stopping;
    const stopEndedAt = Date.now();
    expect(await broker!.up(), 'the broker is down after stop').toBe(false);
    sendWave(6);
    await pause(1_000);
    sendWave(7);
    expect(app!.worker.state).toBe('running');
    // Starting again, on the data it left: two waves while it starts, two after.
    const starting = broker!.startAgain(AbortSignal.timeout(240_000));
    sendWave(8);
    await pause(500);
    sendWave(9);
    await starting;
    sendWave(10);
    await pause(300);
    sendWave(11);

    const outcomes = await Promise.all(calls);
    expect(outcomes).toHaveLength(N);
    const failed = outcomes.filter((o) => o.error !== undefined || o.answer !== `answer ${o.n}`);
    expect(failed, 'every call resolves with its own answer').toEqual([]);

    // Both sides noticed the outage and came back by themselves. The WebSocket transport says
    // so in our log; the native client reconnects inside libpulsar, which logs at its own levels.
    if (TEST_TRANSPORT === 'pulsar-ws') {
      // "Recovered" comes once the last of the process's sockets is back: an idle one (the
      // cancel subscription, say) may still sit in its backoff (at most 5 s) after every call
      // was answered, so the line is awaited, not read at once.
      const said = (lines: () => string[], msg: string) => lines().some((l) => (JSON.parse(l) as { msg: string }).msg === msg);
      expect(said(workerLog.lines, 'broker connection lost; reconnecting')).toBe(true);
      await waitUntil(() => said(workerLog.lines, 'broker connection recovered'), 30_000, 'the worker logs the recovery');
      await waitUntil(() => said(agentLog.lines, 'broker connection recovered'), 30_000, 'the agent logs the recovery');
    }
    expect(app!.worker.state).toBe('running');

    // The wire: every final answer, once per broker message.
    const deadline = Date.now() + 60_000;
    while (finalsById.size < N && Date.now() < deadline) await pause(200);
    const finals = new Map<string, number>();
    for (const [id, byMessage] of finalsById) {
      finals.set(id, byMessage.size);
      for (const text of byMessage.values()) if (text.startsWith('answer ')) ids.set(Number(text.slice(7)), id);
    }
    expect(ids.size, 'a final answer on the wire for every request').toBe(N);
    expect(
      [...finalsById.values()].flatMap((m) => [...m.values()]).filter((t) => !t.startsWith('answer ')),
      'no error answers',
    ).toEqual([]);

    // In flight during the outage: sent before the broker had stopped, answered after the stop
    // began, less ACK_MARGIN_MS (an ack reaches the broker's cursor a little after the answer
    // reached the agent: the WebSocket service groups acks for up to 100 ms).
    const inWindow = new Set(outcomes.filter((o) => o.sentAt < stopEndedAt && o.settledAt > stopBeganAt - ACK_MARGIN_MS).map((o) => ids.get(o.n)!));
    const extraFinals = [...finals].filter(([, c]) => c > 1);
    const extraRuns = [...executions].filter(([, c]) => c > 1);
    process.stderr.write(
      `[broker-restart] ${N} requests; ${inWindow.size} in flight during the outage; ` +
        `${extraFinals.length} answered more than once on the wire (${extraFinals.reduce((s, [, c]) => s + c - 1, 0)} extra answers), ` +
        `${extraRuns.length} executed more than once; worker ${JSON.stringify(app!.worker.stats())}\n`,
    );
    expect(
      extraFinals.filter(([id]) => !inWindow.has(id)),
      'duplicate answers only for requests in flight during the outage',
    ).toEqual([]);
    expect(
      extraRuns.filter(([id]) => !inWindow.has(id)),
      'repeated executions only for requests in flight during the outage',
    ).toEqual([]);
    for (const id of ids.values()) expect(executions.get(id) ?? 0, `request ${id} executed`).toBeGreaterThanOrEqual(1);
  }, 240_000);
});
