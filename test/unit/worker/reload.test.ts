/**
 * Worker.apply: a catalog swapped in while requests run, on both kinds of request topic
 * (TrustGraph's are non-persistent; the memory transport drops and never redelivers there,
 * as the broker does).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../src/catalog/catalog.js';
import type { ToolService } from '../../../src/catalog/descriptors.js';
import type { Plugin } from '../../../src/plugins/plugin.js';
import { asServed, catalogOf, entry, pluginContext, captureLogger, testRegistry, type Behaviour } from '../../support/harness.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** A gate a slow tool waits on, and the ids of the calls that reached it. */
function gate(): { behaviour: Behaviour; open: () => void; reached: string[] } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached: string[] = [];
  return {
    reached,
    open,
    behaviour: (call) =>
      (async function* () {
        reached.push(call.requestId);
        await opened;
        yield `slow ${call.tool?.name ?? '-'}`;
      })(),
  };
}

const quick =
  (label: string): Behaviour =>
  (call) =>
    (async function* () {
      yield `${label} ${call.tool?.name ?? '-'}`;
    })();

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !pred(); i++) await sleep(10);
  if (!pred()) throw new Error(`never: ${what}`);
}

for (const kind of ['persistent', 'non-persistent'] as const) {
  describe(`Worker.apply on ${kind} request topics`, () => {
    const topicOf = (id: string) => (kind === 'persistent' ? `persistent://tg/flow/${id}-request` : `non-persistent://tg/request/${id}`);
    const RES = 'non-persistent://tg/response/reload';
    const svc = (id: string, behaviour: string, extra: Record<string, unknown> = {}) =>
      entry('tool-service', id, {
        id,
        'request-queue': topicOf(id),
        'response-queue': RES,
        'config-params': ['kind'],
        plugin: { kind: 'test', behaviour },
        ...extra,
      });
    const tool = (name: string, service: string, k: string) => entry('tool', name, { name, service, kind: k, description: name });

    async function setup(behaviours: Record<string, Behaviour>, entries: ReturnType<typeof entry>[]) {
      const registry = testRegistry(behaviours);
      const created: string[] = [];
      const closed: string[] = [];
      const { log } = captureLogger();
      // The plugins of the first catalog are not watched: only those a reload makes.
      let watching = false;
      let refusal: Error | undefined;
      const createPlugin = async (s: ToolService): Promise<Plugin | undefined> => {
        if (refusal) throw refusal;
        const p = await (await registry.load(s.plugin!.kind))!.create(asServed(s), pluginContext(log));
        if (!watching) return p;
        const label = `${s.id}:${(s.plugin!.options as { behaviour: string }).behaviour}`;
        created.push(label);
        return { ...p, invoke: p.invoke.bind(p), close: async () => void closed.push(label) };
      };
      const catalog = await catalogOf(entries, registry);
      fx = await startFixture(catalog, behaviours, RES, {}, { createPlugin });
      watching = true;
      const apply = async (next: ReturnType<typeof entry>[]): Promise<Catalog> => {
        const c = await catalogOf(next, registry);
        await fx!.worker.apply(c);
        return c;
      };
      /** From now on, every plugin the worker asks for fails to be made. */
      const refuseWith = (err: Error): void => {
        refusal = err;
      };
      return { fx, apply, created, closed, refuseWith };
    }

    it('serves a tool added by a reload at once, without a new subscription or plugin', async () => {
      const { fx, apply, created } = await setup({ q: quick('q') }, [svc('s', 'q'), tool('a', 's', 'a')]);
      const before = await fx.request(topicOf('s'), {}, { kind: 'b' });
      expect((await fx.responses.final(before))[0]?.error?.type).toBe('unknown-tool');
      await apply([svc('s', 'q'), tool('a', 's', 'a'), tool('b', 's', 'b')]);
      const after = await fx.request(topicOf('s'), {}, { kind: 'b' });
      expect(await fx.responses.final(after)).toEqual([{ error: null, response: 'q b', endOfStream: true }]);
      expect(created).toEqual([]);
      expect(fx.transport.subscriptionNames(topicOf('s'))).toEqual(['s-request']);
      expect(fx.worker.current().tools.has('b')).toBe(true);
    });

    it('starts consuming a service added by a reload', async () => {
      const { fx, apply } = await setup({ q: quick('q') }, [svc('s', 'q'), tool('a', 's', 'a')]);
      await apply([svc('s', 'q'), tool('a', 's', 'a'), svc('t', 'q'), tool('c', 't', 'c')]);
      const id = await fx.request(topicOf('t'), {}, { kind: 'c' });
      expect(await fx.responses.final(id)).toEqual([{ error: null, response: 'q c', endOfStream: true }]);
      expect(
        fx.worker
          .served()
          .map((s) => s.id)
          .sort(),
      ).toEqual(['s', 't']);
    });

    it('lets a removed service finish its request in flight, then takes nothing more and unsubscribes', async () => {
      const slow = gate();
      const { fx, apply, closed } = await setup({ slow: slow.behaviour, q: quick('q') }, [svc('t', 'q'), tool('c', 't', 'c')]);
      // Through apply, so that its plugin is one whose close is seen.
      await apply([svc('s', 'slow'), tool('a', 's', 'a'), svc('t', 'q'), tool('c', 't', 'c')]);
      const first = await fx.request(topicOf('s'), {}, { kind: 'a' });
      await until(() => slow.reached.length === 1, 'the first call started');
      await apply([svc('t', 'q'), tool('c', 't', 'c')]);
      expect(fx.worker.served().map((s) => s.id)).toEqual(['t']);
      const late = await fx.request(topicOf('s'), {}, { kind: 'a' });
      await sleep(50);
      expect(closed).toEqual([]);
      slow.open();
      // Cut short by nothing: the answer of the call that ran across the reload.
      expect(await fx.responses.final(first)).toEqual([{ error: null, response: 'slow a', endOfStream: true }]);
      await until(() => fx.transport.subscriptionNames(topicOf('s')).length === 0, 'the subscription was removed');
      await until(() => closed.length === 1, 'the plugin was closed');
      expect(closed).toEqual(['s:slow']);
      expect(slow.reached).toEqual([first]);
      expect(fx.responses.byId.has(late)).toBe(false);
    });

    it('replaces a changed service: the old instance finishes what it holds while the new one takes new requests', async () => {
      const slow = gate();
      const { fx, apply, created, closed } = await setup({ slow: slow.behaviour, q: quick('new') }, []);
      await apply([svc('s', 'slow'), tool('a', 's', 'a')]);
      const first = await fx.request(topicOf('s'), {}, { kind: 'a' });
      await until(() => slow.reached.length === 1, 'the first call started');
      await apply([svc('s', 'q'), tool('a', 's', 'a')]);
      const second = await fx.request(topicOf('s'), {}, { kind: 'a' });
      expect(await fx.responses.final(second)).toEqual([{ error: null, response: 'new a', endOfStream: true }]);
      expect(fx.responses.byId.has(first)).toBe(false);
      expect(closed).toEqual([]);
      slow.open();
      expect(await fx.responses.final(first)).toEqual([{ error: null, response: 'slow a', endOfStream: true }]);
      expect(created).toEqual(['s:slow', 's:q']);
      await until(() => closed.length === 1, 'the old plugin was closed');
      expect(closed).toEqual(['s:slow']);
      // Same topic and subscription: the new instance keeps it.
      expect(fx.transport.subscriptionNames(topicOf('s'))).toEqual(['s-request']);
    });

    it('moves a service to another topic: the new one is consumed at once, the old one let go once drained', async () => {
      const slow = gate();
      const { fx, apply } = await setup({ slow: slow.behaviour, q: quick('moved') }, []);
      await apply([svc('s', 'slow'), tool('a', 's', 'a')]);
      const first = await fx.request(topicOf('s'), {}, { kind: 'a' });
      await until(() => slow.reached.length === 1, 'the first call started');
      await apply([svc('s', 'q', { 'request-queue': topicOf('s2') }), tool('a', 's', 'a')]);
      const second = await fx.request(topicOf('s2'), {}, { kind: 'a' });
      expect(await fx.responses.final(second)).toEqual([{ error: null, response: 'moved a', endOfStream: true }]);
      // Still held by the old instance, which has a call to finish.
      expect(fx.transport.subscriptionNames(topicOf('s'))).toEqual(['s-request']);
      slow.open();
      expect(await fx.responses.final(first)).toEqual([{ error: null, response: 'slow a', endOfStream: true }]);
      await until(() => fx.transport.subscriptionNames(topicOf('s')).length === 0, 'the old subscription removed');
      expect(fx.transport.subscriptionNames(topicOf('s2'))).toEqual(['s-request']);
    });

    it('changes nothing when a new service cannot get its plugin', async () => {
      const { fx, refuseWith } = await setup({ q: quick('q') }, [svc('s', 'q'), tool('a', 's', 'a')]);
      const next = await catalogOf([svc('s', 'q'), tool('a', 's', 'a'), svc('t', 'q'), tool('c', 't', 'c')], testRegistry({ q: quick('q') }));
      refuseWith(new Error('no binary here'));
      await expect(fx.worker.apply(next)).rejects.toThrow(/no binary here/);
      expect(fx.worker.current().tools.has('c')).toBe(false);
      expect(fx.transport.subscriptionNames(topicOf('t'))).toEqual([]);
      const id = await fx.request(topicOf('s'), {}, { kind: 'a' });
      expect(await fx.responses.final(id)).toEqual([{ error: null, response: 'q a', endOfStream: true }]);
    });

    it('waits at stop for instances a reload retired', async () => {
      const slow = gate();
      const { fx, apply } = await setup({ slow: slow.behaviour, q: quick('q') }, [svc('s', 'slow'), tool('a', 's', 'a')]);
      const first = await fx.request(topicOf('s'), {}, { kind: 'a' });
      await until(() => slow.reached.length === 1, 'the first call started');
      await apply([svc('s', 'q'), tool('a', 's', 'a')]);
      const stopped = fx.worker.stop(5000);
      setTimeout(slow.open, 50);
      await stopped;
      expect(await fx.responses.final(first)).toEqual([{ error: null, response: 'slow a', endOfStream: true }]);
    });
  });
}
