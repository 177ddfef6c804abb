/**
 * The worker on TrustGraph's non-persistent request topics, on the memory transport (which
 * drops what a consumer has no room for and never redelivers there, as the broker does).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../../src/errors.js';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import type { WorkerLimits } from '../../../src/worker/limits.js';
import { catalogOf, entry, testRegistry, type Behaviour } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const REQ = 'non-persistent://tg/request/np';
const RES = 'non-persistent://tg/response/np';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixture(behaviour: Behaviour, limits: Partial<WorkerLimits> = {}, concurrency = 2): Promise<Fixture> {
  const svc = service('np', { 'request-queue': REQ, 'response-queue': RES, plugin: { kind: 'test', behaviour: 'b' }, concurrency });
  const catalog = await catalogOf([entry('tool-service', 'np', svc)], testRegistry({ b: behaviour }));
  fx = await startFixture(catalog, { b: behaviour }, RES, limits);
  return fx;
}

const hanging =
  (invoked: string[]): Behaviour =>
  (call: ToolCall) =>
    (async function* () {
      invoked.push(call.requestId);
      await sleep(60_000); // ignores its signal on purpose
      yield 'never';
    })();

describe('Worker on a non-persistent request topic', () => {
  it('answers a burst far larger than its concurrency: the broker would drop what the worker leaves with it', async () => {
    const f = await fixture((call) =>
      (async function* () {
        await sleep(1);
        yield `answer ${String(call.arguments['n'])}`;
      })(),
    );
    const ids = await Promise.all(Array.from({ length: 500 }, (_, n) => f.request(REQ, { n })));
    await f.responses.waitFor(() => f.responses.finished().length === 500, 10_000);
    for (const [n, id] of ids.entries()) expect(f.responses.byId.get(id)).toEqual([{ error: null, response: `answer ${n}`, endOfStream: true }]);
  });

  it('answers a retriable failure at once instead of nacking it into nothing', async () => {
    const f = await fixture(() =>
      (async function* () {
        yield* [];
        throw new UnavailableError('backend down');
      })(),
    );
    const id = await f.request(REQ, {});
    expect(await f.responses.final(id)).toEqual([{ error: { type: 'unavailable', message: 'backend down' }, response: '', endOfStream: true }]);
    expect(f.worker.stats().nacked).toBe(0);
  });

  it('answers what is still running or queued when the grace period ends, and runs nothing after it', async () => {
    const invoked: string[] = [];
    const f = await fixture(hanging(invoked), { shutdownGraceMs: 100 });
    const ids = await Promise.all(Array.from({ length: 6 }, (_, n) => f.request(REQ, { n })));
    await f.responses.waitFor(() => f.worker.stats().queued === 4);
    await f.worker.stop();
    expect(invoked).toHaveLength(2);
    for (const id of ids) {
      expect(f.responses.byId.get(id)).toEqual([
        { error: { type: 'unavailable', message: 'the tool worker is shutting down; try again' }, response: '', endOfStream: true },
      ]);
    }
    expect(f.worker.stats().nacked).toBe(0);
  });

  it('sheds past its backlog bound with an unavailable answer, and says so in its counters', async () => {
    const invoked: string[] = [];
    const f = await fixture(hanging(invoked), { backlogMessages: 3 }, 1);
    const ids = await Promise.all(Array.from({ length: 10 }, (_, n) => f.request(REQ, { n })));
    await f.responses.waitFor(() => f.responses.finished().length === 6);
    const shed = ids.slice(4);
    for (const id of shed) expect((await f.responses.final(id))[0]!.error?.type).toBe('unavailable');
    expect(f.worker.stats()).toMatchObject({ shed: 6, queued: 3 });
    expect(invoked).toEqual([ids[0]]);
  });

  it('holds a backlog bounded by bytes as well as by count', async () => {
    const invoked: string[] = [];
    const f = await fixture(hanging(invoked), { backlogBytes: 1000 }, 1);
    const big = 'x'.repeat(400);
    await Promise.all(Array.from({ length: 5 }, (_, n) => f.request(REQ, { n, big })));
    await f.responses.waitFor(() => f.responses.finished().length === 2);
    expect(f.worker.stats()).toMatchObject({ shed: 2, queued: 2 });
  });
});
