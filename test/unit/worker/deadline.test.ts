/**
 * One deadline per call: the worker works it out (the tool's `timeout-ms`, else its service's,
 * else the worker's) and hands it to the plugin, which keeps no default of its own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_PROPERTY } from '../../../src/envelope/properties.js';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { catalogOf, entry, testRegistry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const RES = 'non-persistent://tg/response/deadline';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe('the call’s deadline', () => {
  it('is handed to the plugin: the tool’s, else the service’s, else the worker’s (here above 120 s)', async () => {
    const seen = new Map<string, number>();
    const record = (call: ToolCall) =>
      (async function* () {
        seen.set(call.tool!.name, call.timeoutMs);
        yield 'ok';
      })();
    const svc = (id: string, extra: Record<string, unknown>) =>
      entry('tool-service', id, service(id, { 'response-queue': RES, plugin: { kind: 'test', behaviour: 'record' }, ...extra }));
    const catalog = await catalogOf(
      [
        svc('own', { 'timeout-ms': 40_000 }),
        entry('tool', 'tool-own', { name: 'tool-own', service: 'own', 'timeout-ms': 7_000 }),
        svc('svc-own', { 'timeout-ms': 40_000 }),
        entry('tool', 'service-own', { name: 'service-own', service: 'svc-own' }),
        svc('none', {}),
        entry('tool', 'worker-own', { name: 'worker-own', service: 'none' }),
      ],
      testRegistry({ record }),
    );
    fx = await startFixture(catalog, { record }, RES, { timeoutMs: 300_000 });
    for (const [id, tool] of [
      ['own', 'tool-own'],
      ['svc-own', 'service-own'],
      ['none', 'worker-own'],
    ] as const) {
      const rid = await fx.request(`persistent://tg/flow/${id}-request`, {}, {}, { [TOOL_PROPERTY]: tool });
      expect((await fx.responses.final(rid)).at(-1)?.response).toBe('ok');
    }
    expect(Object.fromEntries(seen)).toEqual({ 'tool-own': 7_000, 'service-own': 40_000, 'worker-own': 300_000 });
  });
});
