/**
 * Whom a cancel and the hard stop reach: every run of the request id (a redelivered copy may
 * run beside the first), and only calls of the cancel topic's own namespace.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CANCEL_PROPERTY, TOOL_PROPERTY } from '../../../src/envelope/properties.js';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { cancelTopic } from '../../../src/transport/topic-name.js';
import { catalogOf, entry, testRegistry } from '../../support/harness.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const RES = 'non-persistent://tg/response/scope';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** A tool that waits for its signal; records each run's service and why it ended. */
function waiting() {
  const started: string[] = [];
  const ended: { service: string; reason: string }[] = [];
  const behaviour = (call: ToolCall) =>
    (async function* () {
      started.push(call.service.id);
      await new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve(), { once: true }));
      ended.push({ service: call.service.id, reason: (call.signal.reason as Error).message });
      yield 'never read';
    })();
  return { started, ended, behaviour };
}

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !pred(); i++) await sleep(10);
  if (!pred()) throw new Error(`never: ${what}`);
}

const svc = (id: string, requestQueue: string) =>
  entry('tool-service', id, { id, 'request-queue': requestQueue, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'wait' }, 'timeout-ms': 60_000 });

describe('a cancel', () => {
  it('acts only on calls of its own namespace, whichever service the worker bound first', async () => {
    const w = waiting();
    const topics = { b: 'persistent://tenant-b/tools/slow-request', a: 'persistent://tenant-a/tools/slow-request' };
    // tenant-b first: a search that stops at the first call with the id would take b's.
    const catalog = await catalogOf(
      [
        svc('slow-b', topics.b),
        svc('slow-a', topics.a),
        entry('tool', 'slow-b', { name: 'slow-b', service: 'slow-b' }),
        entry('tool', 'slow-a', { name: 'slow-a', service: 'slow-a' }),
      ],
      testRegistry({ wait: w.behaviour }),
    );
    fx = await startFixture(catalog, { wait: w.behaviour }, RES);
    await fx.send(topics.b, JSON.stringify({ config: {}, arguments: {} }), { id: 'same-id', [TOOL_PROPERTY]: 'slow-b' });
    await fx.send(topics.a, JSON.stringify({ config: {}, arguments: {} }), { id: 'same-id', [TOOL_PROPERTY]: 'slow-a' });
    await until(() => w.started.length === 2, 'both calls started');
    await fx.send(cancelTopic(topics.a)!, '', { [CANCEL_PROPERTY]: 'same-id' });
    await until(() => w.ended.length >= 1, 'a call saw the cancel');
    await fx.responses.waitFor(() => fx!.responses.byId.get('same-id')?.length === 1);
    expect(w.ended).toEqual([{ service: 'slow-a', reason: 'the agent cancelled the call' }]);
  });

  for (const kind of ['persistent', 'non-persistent'] as const) {
    const REQ = kind === 'persistent' ? 'persistent://tg/flow/twice-request' : 'non-persistent://tg/request/twice';
    const setup = async () => {
      const w = waiting();
      const catalog = await catalogOf([svc('twice', REQ), entry('tool', 'twice', { name: 'twice', service: 'twice' })], testRegistry({ wait: w.behaviour }));
      fx = await startFixture(catalog, { wait: w.behaviour }, RES);
      // Two deliveries of one request id running at once (a redelivery, or an agent that sent twice).
      for (let i = 0; i < 2; i++) await fx.send(REQ, JSON.stringify({ config: {}, arguments: {} }), { id: 'one-id' });
      await until(() => w.started.length === 2, 'both runs started');
      return w;
    };

    it(`reaches both runs of one request id on a ${kind} topic`, async () => {
      const w = await setup();
      await fx!.send(cancelTopic(REQ)!, '', { [CANCEL_PROPERTY]: 'one-id' });
      await until(() => w.ended.length === 2, 'both runs saw the cancel');
      expect(w.ended.map((e) => e.reason)).toEqual(['the agent cancelled the call', 'the agent cancelled the call']);
    });

    it(`lets the hard stop end both runs of one request id on a ${kind} topic`, async () => {
      const w = await setup();
      await fx!.worker.stop(100);
      expect(w.ended.map((e) => e.reason)).toEqual(['the worker is shutting down', 'the worker is shutting down']);
    }, 10_000);
  }
});

describe('the cancel subscription of a namespace', () => {
  it('closes when no service of the namespace is left, and opens again (cancels working) when one comes back', async () => {
    const w = waiting();
    const registry = testRegistry({ wait: w.behaviour });
    const kept = 'persistent://tg/flow/kept-request';
    const churned = 'persistent://tenant-c/tools/churned-request';
    const both = await catalogOf(
      [
        svc('kept', kept),
        svc('churned', churned),
        entry('tool', 'kept', { name: 'kept', service: 'kept' }),
        entry('tool', 'churned', { name: 'churned', service: 'churned' }),
      ],
      registry,
    );
    const keptOnly = await catalogOf([svc('kept', kept), entry('tool', 'kept', { name: 'kept', service: 'kept' })], registry);
    fx = await startFixture(both, { wait: w.behaviour }, RES);
    const readers = () => fx!.transport.subscriptionNames(cancelTopic(churned)!).length;
    expect(readers()).toBe(1);
    await fx.worker.apply(keptOnly);
    await until(() => readers() === 0, 'the cancel subscription closed');
    expect(fx.transport.subscriptionNames(cancelTopic(kept)!)).toHaveLength(1);
    await fx.worker.apply(both);
    expect(readers()).toBe(1);
    await fx.send(churned, JSON.stringify({ config: {}, arguments: {} }), { id: 'back' });
    await until(() => w.started.length === 1, 'the call started');
    await fx.send(cancelTopic(churned)!, '', { [CANCEL_PROPERTY]: 'back' });
    await until(() => w.ended.length === 1, 'the call saw the cancel');
    expect(w.ended).toEqual([{ service: 'churned', reason: 'the agent cancelled the call' }]);
  });
});
