import { afterEach, describe, expect, it } from 'vitest';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { catalogOf, entry, testRegistry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

// A plugin that ignores its signal: its calls time out (the agent is answered) but keep running.
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixture(request: string, response: string) {
  const releases: (() => void)[] = [];
  let invoked = 0;
  const behaviour = (_call: ToolCall) =>
    (async function* () {
      invoked++;
      await new Promise<void>((r) => releases.push(r)); // deaf to call.signal
      yield 'late';
    })();
  const registry = testRegistry({ b: behaviour });
  const catalog = await catalogOf(
    [
      entry(
        'tool-service',
        'hung',
        service('hung', { 'request-queue': request, 'response-queue': response, plugin: { kind: 'test', behaviour: 'b' }, concurrency: 2, 'timeout-ms': 30 }),
      ),
    ],
    registry,
  );
  fx = await startFixture(catalog, { b: behaviour }, response, { maxAbandoned: 2 });
  return { f: fx, releases, invoked: () => invoked };
}

describe('calls abandoned by a plugin that ignores its signal', () => {
  it('on a persistent topic: past the limit the service takes no more requests until they end', async () => {
    const { f, releases, invoked } = await fixture('persistent://tg/flow/hung-request', 'non-persistent://tg/response/hung');
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await f.request('persistent://tg/flow/hung-request', { n: i }));
    // Calls time out and are answered while their work runs on, until the limit is reached.
    await f.responses.waitFor(() => f.worker.abandoned().some((a) => a.blocked));
    const ran = invoked();
    expect(ran).toBeLessThan(4);
    for (const id of f.responses.finished()) expect((await f.responses.final(id))[0]?.error?.type).toBe('timeout');
    await turns(20);
    expect(invoked()).toBe(ran);
    expect(f.worker.abandoned()).toEqual([{ service: 'hung', abandoned: expect.any(Number), blocked: true }]);
    expect(f.lines().some((l) => l.includes('taking none of this service'))).toBe(true);
    // The hung work ends: the service takes the rest.
    for (const r of releases.splice(0)) r();
    await f.responses.waitFor(() => {
      for (const r of releases.splice(0)) r();
      return invoked() === 4;
    });
    expect(f.worker.abandoned().filter((a) => a.blocked)).toEqual([]);
    for (const r of releases.splice(0)) r();
  });

  it('on a non-persistent topic: past the limit its requests are answered unavailable, not run', async () => {
    const { f, releases, invoked } = await fixture('non-persistent://tg/request/hung', 'non-persistent://tg/response/hung-np');
    const first = [await f.request('non-persistent://tg/request/hung', {}), await f.request('non-persistent://tg/request/hung', {})];
    await f.responses.waitFor(() => first.every((id) => f.responses.finished().includes(id)));
    const third = await f.request('non-persistent://tg/request/hung', {});
    const [answer] = await f.responses.final(third);
    expect(answer?.error?.type).toBe('unavailable');
    expect(answer?.error?.message).toMatch(/2 calls still running past their timeout/);
    expect(invoked()).toBe(2);
    for (const r of releases.splice(0)) r();
  });
});

describe('a limit of 0', () => {
  it('turns the limit off', async () => {
    const { RequestHandler } = await import('../../../src/worker/request-handler.js');
    const { DEFAULT_LIMITS } = await import('../../../src/worker/limits.js');
    const { captureLogger } = await import('../../support/harness.js');
    const handler = new RequestHandler({
      service: { id: 's' } as never,
      catalog: () => ({}) as never,
      plugin: { kind: 'x', invoke: () => Promise.resolve('') },
      transport: {} as never,
      limits: { ...DEFAULT_LIMITS, maxAbandoned: 0 },
      log: captureLogger().log,
      hardStop: new AbortController().signal,
      redeliverable: true,
    });
    expect(handler.blocked).toBe(false);
    handler.dispose();
  });
});
