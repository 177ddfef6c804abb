/**
 * Limits on every settle path: nothing runs once its call is aborted, error texts are
 * bounded, a publish that keeps failing ends on the dead-letter topic instead of looping, a
 * redelivered copy of an answered request is not run again, and an agent's private response
 * subscription leaves nothing on the broker.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolClient } from '../../../src/client/tool-client.js';
import { encodeRequest } from '../../../src/envelope/request.js';
import { MAX_ERROR_TEXT } from '../../../src/envelope/response.js';
import { TransportError } from '../../../src/errors.js';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { IncomingMessage, Producer } from '../../../src/transport/transport.js';
import { DEFAULT_LIMITS } from '../../../src/worker/limits.js';
import { DEAD_LETTER_REASON_PROPERTY } from '../../../src/envelope/properties.js';
import { Outcome } from '../../../src/worker/outcome.js';
import { RequestHandler } from '../../../src/worker/request-handler.js';
import { captureLogger, catalogOf, entry, pluginMaker, testRegistry, type Behaviour } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const REQ = 'persistent://tg/flow/lim-request';
const RES = 'non-persistent://tg/response/lim';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe('after the grace period', () => {
  it('invokes nothing that was still queued behind the worker-wide limit; it goes back for another worker', async () => {
    const invoked: string[] = [];
    const hang: Behaviour = (call: ToolCall) =>
      (async function* () {
        invoked.push(call.requestId);
        await sleep(60_000); // ignores its signal
        yield 'never';
      })();
    const catalog = await catalogOf(
      ['a', 'b'].map((id) => entry('tool-service', id, service(id, { plugin: { kind: 'test', behaviour: 'h' }, concurrency: 2 }))),
      testRegistry({ h: hang }),
    );
    fx = await startFixture(catalog, { h: hang }, 'non-persistent://tg/response/a', { concurrency: 1, shutdownGraceMs: 100 });
    for (const id of ['a', 'b']) for (let n = 0; n < 2; n++) await fx.request(`persistent://tg/flow/${id}-request`, { n });
    await fx.responses.waitFor(() => fx!.worker.stats().inFlight === 4);
    await fx.worker.stop();
    expect(invoked).toHaveLength(1);
    expect(fx.worker.stats().nacked).toBe(4);
  });
});

describe('error texts', () => {
  it('are bounded however much agent input they quote', async () => {
    const ok: Behaviour = () =>
      (async function* () {
        yield 'x';
      })();
    const catalog = await catalogOf(
      [
        entry('tool-service', 'lim', service('lim', { 'config-params': [{ name: 'style' }], plugin: { kind: 'test', behaviour: 'ok' } })),
        entry('tool', 't', { type: 'tool-service', name: 't', description: 'd', service: 'lim', style: 'pun', arguments: [] }),
      ],
      testRegistry({ ok }),
    );
    fx = await startFixture(catalog, { ok }, RES);
    const id = await fx.request(REQ, {}, { style: '"\\'.repeat(50_000) });
    const [r] = await fx.responses.final(id);
    expect(r!.error!.type).toBe('unknown-tool');
    expect(r!.error!.message.length).toBeLessThanOrEqual(MAX_ERROR_TEXT + 40);
    expect(r!.error!.message).toMatch(/\.\.\. \(\d+ more characters\)$/);
  });
});

/** A memory broker whose response topic refuses every message. */
class RefusingTransport extends MemoryTransport {
  refused = 0;
  override async producer(topic: string): Promise<Producer> {
    if (topic !== RES) return super.producer(topic);
    return {
      topic,
      send: async () => {
        this.refused++;
        throw new TransportError('message too large for the broker', { retriable: false });
      },
    };
  }
}

describe('a publish that keeps failing', () => {
  it('is nacked up to the redelivery limit, then dead-lettered with its reason, never looped', async () => {
    const transport = new RefusingTransport();
    const ok: Behaviour = () =>
      (async function* () {
        yield 'x';
      })();
    const catalog = await catalogOf([entry('tool-service', 'lim', service('lim', { plugin: { kind: 'test', behaviour: 'ok' } }))], testRegistry({ ok }));
    const dead = await transport.subscribe({ topic: `${REQ}-lim-request-DLQ`, subscription: 'ops' });
    fx = await startFixture(catalog, { ok }, RES, { maxRedeliveries: 2, nackDelayMs: 10 }, { transport });
    const id = await fx.request(REQ, {});
    const m = (await dead[Symbol.asyncIterator]().next()).value!;
    expect(m.properties['id']).toBe(id);
    expect(m.properties[DEAD_LETTER_REASON_PROPERTY]).toBe('the answer could not be published: message too large for the broker');
    await fx.responses.waitFor(() => fx!.worker.stats().deadLettered === 1);
    expect(fx.worker.stats()).toMatchObject({ nacked: 2, deadLettered: 1 });
    // Three deliveries, each trying the answer and then the error that says it failed.
    expect(transport.refused).toBe(6);
    await dead.close();
  });
});

/** A handler of service `lim` (redeliverable unless said otherwise) whose test plugin behaves as `behaviour`. */
async function redeliverableHandler(
  behaviour: Behaviour,
  redeliverable = true,
  transport: MemoryTransport = new MemoryTransport(),
): Promise<{ handler: RequestHandler; transport: MemoryTransport }> {
  const registry = testRegistry({ it: behaviour });
  const catalog = await catalogOf([entry('tool-service', 'lim', service('lim', { plugin: { kind: 'test', behaviour: 'it' } }))], registry);
  const { log } = captureLogger();
  const lim = catalog.services.get('lim')!;
  const handler = new RequestHandler({
    service: lim,
    catalog: () => catalog,
    plugin: (await pluginMaker(registry, log)(lim))!,
    transport,
    limits: DEFAULT_LIMITS,
    log,
    hardStop: new AbortController().signal,
    redeliverable,
  });
  return { handler, transport };
}

/** Delivery `messageId` of request `req-1`; its ack and nack are written to `settled` with `label`. */
function request(messageId: string, redeliveryCount: number, label: string, settled: string[]): IncomingMessage {
  return {
    data: encodeRequest({ config: {}, arguments: {} }),
    properties: { id: 'req-1' },
    redeliveryCount,
    messageId,
    deliveryKey: messageId,
    topic: REQ,
    ack: async () => void settled.push(`ack ${label}`),
    nack: async () => void settled.push(`nack ${label}`),
  };
}

/** A tool that answers `x` and counts its runs. */
function countingTool(): { behaviour: Behaviour; runs: () => number } {
  let runs = 0;
  const behaviour: Behaviour = () =>
    (async function* () {
      runs++;
      yield 'x';
    })();
  return { behaviour, runs: () => runs };
}

describe('a redelivered copy of an answered request', () => {
  it('is acked without running the tool again, counted as a duplicate; an agent retry (a new message) runs', async () => {
    const tool = countingTool();
    const { handler, transport } = await redeliverableHandler(tool.behaviour);
    const settled: string[] = [];
    const delivery = (messageId: string, redeliveryCount: number): IncomingMessage => request(messageId, redeliveryCount, messageId, settled);
    expect((await handler.handle(delivery('m1', 0))).outcome).toBe(Outcome.Answered);
    expect((await handler.handle(delivery('m1', 1))).outcome).toBe(Outcome.Duplicate);
    // After a topic unload the broker hands unacked messages out again with a count of 0
    // (the WebSocket service's consumer reconnected; nobody nacked): still the same message.
    expect((await handler.handle(delivery('m1', 0))).outcome).toBe(Outcome.Duplicate);
    expect((await handler.handle(delivery('m2', 0))).outcome).toBe(Outcome.Answered);
    expect(tool.runs()).toBe(2);
    expect(settled).toEqual(['ack m1', 'ack m1', 'ack m1', 'ack m2']);
    await transport.close();
  });
});

describe('a delivery whose settling fails', () => {
  it('leaves nothing behind it: a copy of it runs again rather than waiting on it', async () => {
    const tool = countingTool();
    const { handler, transport } = await redeliverableHandler(tool.behaviour, true, new RefusingTransport());
    const settled: string[] = [];
    const failing: IncomingMessage = {
      ...request('m1', 0, 'm1', settled),
      nack: () => Promise.reject(new Error('consumer closed')),
    };
    // The answer cannot be published, and the nack that should bring it back fails too.
    await expect(handler.handle(failing)).rejects.toThrow('consumer closed');
    expect((await handler.handle(request('m1', 1, 'copy', settled))).outcome).toBe(Outcome.Nacked);
    expect(tool.runs()).toBe(2);
    expect(settled).toEqual(['nack copy']);
    await transport.close();
  });
});

describe('the ids a request is answered by', () => {
  /** A delivery that counts reads of its broker id and of its delivery key. */
  function counted(settled: string[]): { delivery: IncomingMessage; reads: { id: number; key: number } } {
    const reads = { id: 0, key: 0 };
    const plain = request('m1', 0, 'm1', settled);
    const delivery: IncomingMessage = {
      ...plain,
      get messageId() {
        reads.id++;
        return 'm1';
      },
      get deliveryKey() {
        reads.key++;
        return 'm1';
      },
    };
    return { delivery, reads };
  }
  const ok: Behaviour = () =>
    (async function* () {
      yield 'x';
    })();

  it('on a topic that does not redeliver: neither the broker id nor the delivery key is read (native objects on the native client)', async () => {
    const { handler, transport } = await redeliverableHandler(ok, false);
    const settled: string[] = [];
    const { delivery, reads } = counted(settled);
    expect((await handler.handle(delivery)).outcome).toBe(Outcome.Answered);
    expect(settled).toEqual(['ack m1']);
    expect(reads).toEqual({ id: 0, key: 0 });
    await transport.close();
  });

  it('on a topic that redelivers: the delivery key tells copies apart, the broker id is not read', async () => {
    const { handler, transport } = await redeliverableHandler(ok);
    const settled: string[] = [];
    const { delivery, reads } = counted(settled);
    expect((await handler.handle(delivery)).outcome).toBe(Outcome.Answered);
    expect(reads.id).toBe(0);
    expect(reads.key).toBeGreaterThan(0);
    // The copy is known by its key (its debug line, at this test's level, names the broker id).
    expect((await handler.handle(delivery)).outcome).toBe(Outcome.Duplicate);
    await transport.close();
  });

  it('pairs the delivery key with the request id: two requests under one key both run', async () => {
    // The native client's key is the publish time, which messages can share within a
    // millisecond (those of one batch always do).
    const tool = countingTool();
    const { handler, transport } = await redeliverableHandler(tool.behaviour);
    const settled: string[] = [];
    const a = request('same-key', 0, 'a', settled);
    const b: IncomingMessage = { ...request('same-key', 0, 'b', settled), properties: { id: 'req-2' } };
    expect((await handler.handle(a)).outcome).toBe(Outcome.Answered);
    expect((await handler.handle(b)).outcome).toBe(Outcome.Answered);
    expect((await handler.handle(a)).outcome).toBe(Outcome.Duplicate);
    expect(tool.runs()).toBe(2);
    await transport.close();
  });
});

describe('a copy of a request still being answered', () => {
  it('runs nothing and settles as the first delivery does', async () => {
    let runs = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: Behaviour = () =>
      (async function* () {
        runs++;
        await held;
        yield 'x';
      })();
    const { handler, transport } = await redeliverableHandler(slow);
    const settled: string[] = [];
    const delivery = (n: number): IncomingMessage => request('m1', 0, String(n), settled);
    // A topic unload hands the unacked message out again while its first delivery still runs.
    const first = handler.handle(delivery(1));
    const copy = handler.handle(delivery(2));
    release();
    expect((await first).outcome).toBe(Outcome.Answered);
    expect((await copy).outcome).toBe(Outcome.Duplicate);
    expect(runs).toBe(1);
    expect(settled.sort()).toEqual(['ack 1', 'ack 2']);
    await transport.close();
  });
});

describe('ToolClient', () => {
  it('leaves no subscription on a response topic once it closes', async () => {
    const transport = new MemoryTransport();
    const topic = `persistent://tg/flow/answers-${randomUUID()}`;
    const client = new ToolClient(transport);
    const call = client
      .call({ requestQueue: 'persistent://tg/flow/nobody', responseQueue: topic, config: {}, arguments: {}, timeoutMs: 50 })
      .catch(() => undefined);
    await call;
    expect(transport.subscriptionNames(topic)).toHaveLength(1);
    await client.close();
    expect(transport.subscriptionNames(topic)).toEqual([]);
    await transport.close();
  });
});
