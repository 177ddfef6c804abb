/**
 * Cancellation on a real broker: an agent that stops waiting aborts the tool on the worker,
 * and a cancel acts only on calls of its own namespace.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import type { ToolCall } from '../../src/plugins/plugin.js';
import type { Transport } from '../../src/transport/transport.js';
import { CANCEL_PROPERTY, ID_PROPERTY } from '../../src/envelope/properties.js';
import { encodeRequest } from '../../src/envelope/request.js';
import { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import { cancelTopic } from '../../src/transport/topic-name.js';
import { serviceDescriptor, toolDescriptor } from '../support/descriptors.js';
import { captureLogger, testRegistry } from '../support/harness.js';
import { deleteTopic, removeDir, startPulsarApp, suffix, writeConfigDir, brokerTransport, waitUntil } from '../support/pulsar-app.js';

const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const { log } = captureLogger('warn');
const started: string[] = [];
const reasons: string[] = [];
const topics = { persistent: `persistent://tg/flow/cancel-${tag}-request`, 'non-persistent': `non-persistent://tg/request/cancel-${tag}` };
const RES = `non-persistent://tg/response/cancel-${tag}`;
/**
 * Two namespaces, as two tenants would have. `first` is bound before `second` (services are
 * read in name order), so a cancel that stops at the first call with its id would take
 * first's call when second's namespace cancels.
 */
const namespaces = { first: `tg/cancel-1-${tag}`, second: `tg/cancel-2-${tag}` };
const KINDS = ['persistent', 'non-persistent'] as const;
const scopedTopic = (ns: keyof typeof namespaces, kind: (typeof KINDS)[number]) => `${kind}://${namespaces[ns]}/slow-${kind}`;
const scopedRuns: { service: string; requestId: string }[] = [];
const scopedEnds: { service: string; requestId: string; reason: string }[] = [];

let app: App;
let agent: Transport;
let client: ToolClient;
let dir: string;

beforeAll(async () => {
  const admin = new PulsarAdminClient(adminUrl);
  for (const ns of Object.values(namespaces)) await admin.createNamespace(ns);
  const scoped = (['first', 'second'] as const).flatMap((ns) => KINDS.map((kind) => ({ id: `scoped-${ns}-${kind}`, topic: scopedTopic(ns, kind) })));
  dir = await writeConfigDir({
    services: [
      // Every service answers on the one topic RES.
      ...Object.entries(topics).map(([k, q]) =>
        serviceDescriptor(`slow-${k}`, { 'request-queue': q, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'wait' }, 'timeout-ms': 60_000 }),
      ),
      ...scoped.map((s) =>
        serviceDescriptor(s.id, { 'request-queue': s.topic, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'scoped' }, 'timeout-ms': 60_000 }),
      ),
    ],
    tools: [...Object.keys(topics).map((k) => toolDescriptor(`slow-${k}`, `slow-${k}`)), ...scoped.map((s) => toolDescriptor(s.id, s.id))],
  });
  const registry = testRegistry({
    wait: (call: ToolCall) =>
      (async function* () {
        started.push(call.requestId);
        await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
        reasons.push((call.signal.reason as Error).message);
        yield 'never read';
      })(),
    scoped: (call: ToolCall) =>
      (async function* () {
        scopedRuns.push({ service: call.service.id, requestId: call.requestId });
        await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
        scopedEnds.push({ service: call.service.id, requestId: call.requestId, reason: (call.signal.reason as Error).message });
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
  for (const ns of Object.keys(namespaces) as (keyof typeof namespaces)[])
    for (const kind of KINDS) await deleteTopic(adminUrl, scopedTopic(ns, kind)).catch(() => undefined);
  for (const ns of Object.values(namespaces)) await new PulsarAdminClient(adminUrl).deleteNamespace(ns).catch(() => undefined);
});

describe('cancellation through the broker', () => {
  it.each(Object.entries(topics))(
    'reaches the tool on a %s request topic',
    async (_kind, requestQueue) => {
      const before = reasons.length;
      const abort = new AbortController();
      const call = client.call({ requestQueue, responseQueue: RES, config: {}, arguments: {}, signal: abort.signal });
      for (let i = 0; i < 500 && started.length <= before; i++) await sleep(20);
      expect(started.length).toBe(before + 1);
      abort.abort();
      await expect(call).rejects.toThrow(/call aborted/);
      for (let i = 0; i < 500 && reasons.length <= before; i++) await sleep(20);
      expect(reasons.slice(before)).toEqual(['the agent cancelled the call']);
    },
    30_000,
  );
});

describe('a cancel on the broker', () => {
  it.each(KINDS)(
    'acts only on the call of its own namespace, not on one of another namespace with the same id (%s request topics)',
    async (kind) => {
      const requestId = `same-${kind}-${tag}`;
      for (const ns of ['first', 'second'] as const) {
        await (
          await agent.producer(scopedTopic(ns, kind))
        ).send({ data: encodeRequest({ config: {}, arguments: {} }), properties: { [ID_PROPERTY]: requestId } });
      }
      await waitUntil(() => scopedRuns.filter((r) => r.requestId === requestId).length === 2, 20_000, 'both calls running');
      await (await agent.producer(cancelTopic(scopedTopic('second', kind))!)).send({ data: '', properties: { [CANCEL_PROPERTY]: requestId } });
      await waitUntil(() => scopedEnds.some((e) => e.requestId === requestId), 20_000, 'a call saw the cancel');
      // Both calls with the id are found in the same pass over the worker's calls: had the
      // cancel reached the other namespace's, it would show by now.
      expect(scopedEnds.filter((e) => e.requestId === requestId)).toEqual([
        { service: `scoped-second-${kind}`, requestId, reason: 'the agent cancelled the call' },
      ]);
    },
    60_000,
  );

  it.each(KINDS)(
    'reaches both runs of one request id running at once (%s request topics)',
    async (kind) => {
      const requestId = `twice-${kind}-${tag}`;
      const producer = await agent.producer(scopedTopic('first', kind));
      for (let i = 0; i < 2; i++) await producer.send({ data: encodeRequest({ config: {}, arguments: {} }), properties: { [ID_PROPERTY]: requestId } });
      await waitUntil(() => scopedRuns.filter((r) => r.requestId === requestId).length === 2, 20_000, 'both runs going');
      await (await agent.producer(cancelTopic(scopedTopic('first', kind))!)).send({ data: '', properties: { [CANCEL_PROPERTY]: requestId } });
      await waitUntil(() => scopedEnds.filter((e) => e.requestId === requestId).length === 2, 20_000, 'both runs saw the cancel');
      expect(scopedEnds.filter((e) => e.requestId === requestId).map((e) => e.reason)).toEqual([
        'the agent cancelled the call',
        'the agent cancelled the call',
      ]);
    },
    60_000,
  );
});
