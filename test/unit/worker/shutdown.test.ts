import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { catalogOf, entry, testRegistry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const REQ = 'persistent://tg/flow/slow-request';
const RES = 'non-persistent://tg/response/slow';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixture(behaviour: (call: ToolCall) => AsyncIterable<string>, grace: number) {
  const registry = testRegistry({ b: behaviour });
  const catalog = await catalogOf([entry('tool-service', 'slow', service('slow', { plugin: { kind: 'test', behaviour: 'b' }, concurrency: 4 }))], registry);
  fx = await startFixture(catalog, { b: behaviour }, RES, { shutdownGraceMs: grace });
  return fx;
}

describe('Worker shutdown', () => {
  it('lets in-flight requests finish within the grace period and leaves the rest to the next worker', async () => {
    const answeredBy: Record<string, string[]> = {};
    let who = 'first';
    const f = await fixture(
      (call) =>
        (async function* () {
          const me = who;
          await sleep(100);
          (answeredBy[call.requestId] ??= []).push(me);
          yield `answered by ${me}`;
        })(),
      5000,
    );
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => f.request(REQ, { n: i })));
    await f.responses.waitFor(() => f.worker.stats().inFlight > 0);
    const stopped = f.worker.stop();
    await stopped;
    expect(f.worker.state).toBe('stopped');
    const afterFirst = f.responses.finished().length;
    expect(afterFirst).toBeGreaterThan(0);
    expect(afterFirst).toBeLessThan(20);
    who = 'second';
    await f.startAnotherWorker();
    await f.responses.waitFor(() => f.responses.finished().length === 20);
    for (const id of ids) {
      expect(f.responses.byId.get(id)).toHaveLength(1);
      expect(answeredBy[id]).toHaveLength(1);
    }
    expect(Object.values(answeredBy).filter((w) => w[0] === 'second').length).toBe(20 - afterFirst);
  });

  it('nacks requests still running when the grace period ends, and another worker answers them', async () => {
    let hang = true;
    const f = await fixture(
      (call) =>
        (async function* () {
          if (hang) await sleep(60_000, undefined, { signal: call.signal });
          yield 'finally';
        })(),
      100,
    );
    const ids = await Promise.all(Array.from({ length: 3 }, (_, i) => f.request(REQ, { n: i })));
    await f.responses.waitFor(() => f.worker.stats().inFlight === 3);
    await f.worker.stop();
    expect(f.worker.stats().nacked).toBe(3);
    expect(f.responses.finished()).toEqual([]);
    hang = false;
    await f.startAnotherWorker();
    await f.responses.waitFor(() => f.responses.finished().length === 3);
    for (const id of ids) expect(f.responses.byId.get(id)).toEqual([{ error: null, response: 'finally', endOfStream: true }]);
  });

  it('stops idempotently', async () => {
    const f = await fixture(
      () =>
        (async function* () {
          yield 'x';
        })(),
      100,
    );
    await Promise.all([f.worker.stop(), f.worker.stop()]);
    expect(f.worker.state).toBe('stopped');
  });
});
