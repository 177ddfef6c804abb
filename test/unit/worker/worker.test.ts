import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedError, ToolFailedError } from '../../../src/errors.js';
import type { Observation, ToolCall } from '../../../src/plugins/plugin.js';
import { DEAD_LETTER_REASON_PROPERTY } from '../../../src/envelope/properties.js';
import { catalogOf, entry, testRegistry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { startFixture, type Fixture } from '../../support/worker-fixture.js';

const REQ = 'persistent://tg/flow/svc-request';
const RES = 'non-persistent://tg/response/svc';

function svc(behaviour: string, extra: Record<string, unknown> = {}) {
  return entry('tool-service', 'svc', service('svc', { plugin: { kind: 'test', behaviour }, 'config-params': ['mode'], ...extra }));
}

const tool = entry('tool', 'greet', {
  name: 'greet',
  service: 'svc',
  mode: 'm1',
  arguments: [
    { name: 'name', type: 'string', required: true },
    { name: 'times', type: 'number', default: 1 },
    { name: 'region', type: 'string', form: 'form' },
  ],
  'runtime-parameters': { region: 'eu' },
});

async function* chunks(...parts: string[]): AsyncIterable<string> {
  for (const p of parts) yield p;
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixture(behaviour: (call: ToolCall) => Observation, extra: Record<string, unknown> = {}, limits = {}) {
  const catalog = await catalogOf([svc('b', extra), tool], testRegistry({ b: behaviour }));
  fx = await startFixture(catalog, { b: behaviour }, RES, limits);
  return fx;
}

describe('Worker', () => {
  it('answers with one final message carrying the request id, chunks joined', async () => {
    const f = await fixture(() => chunks('Hello, ', 'Ada'));
    const id = await f.request(REQ, { name: 'Ada' }, { mode: 'm1' });
    expect(await f.responses.final(id)).toEqual([{ error: null, response: 'Hello, Ada', endOfStream: true }]);
  });

  it('gives the plugin prepared arguments: coerced, defaulted, hidden values kept from the request', async () => {
    let seen: ToolCall | undefined;
    const f = await fixture((call) => {
      seen = call;
      return chunks('ok');
    });
    const id = await f.request(REQ, { name: 42, times: '3', region: 'us', extra: true }, { mode: 'm1' });
    await f.responses.final(id);
    expect(seen?.arguments).toEqual({ name: '42', times: 3, region: 'eu', extra: true });
    expect(seen?.tool?.name).toBe('greet');
    expect(seen?.config).toEqual({ mode: 'm1' });
    expect(seen?.requestId).toBe(id);
  });

  it('streams chunks when the descriptor asks, then a final empty message', async () => {
    const f = await fixture(() => chunks('a', 'b', 'c'), { stream: 'stream' });
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    expect(await f.responses.final(id)).toEqual([
      { error: null, response: 'a', endOfStream: false },
      { error: null, response: 'b', endOfStream: false },
      { error: null, response: 'c', endOfStream: false },
      { error: null, response: '', endOfStream: true },
    ]);
  });

  it('streams when the request carries toolwire-stream=true, and not when it says false', async () => {
    const f = await fixture(() => chunks('a', 'b'));
    const streamed = await f.request(REQ, { name: 'x' }, { mode: 'm1' }, { 'toolwire-stream': 'true' });
    expect((await f.responses.final(streamed)).map((r) => r.response)).toEqual(['a', 'b', '']);
    await f.close();
    const g = await fixture(() => chunks('a', 'b'), { stream: 'stream' });
    const single = await g.request(REQ, { name: 'x' }, { mode: 'm1' }, { 'toolwire-stream': 'false' });
    expect(await g.responses.final(single)).toEqual([{ error: null, response: 'ab', endOfStream: true }]);
  });

  it('answers a malformed payload with an invalid-request error under its id, and keeps serving', async () => {
    const f = await fixture(() => chunks('fine'));
    await f.send(REQ, Buffer.from([0xff, 0x00, 0x7b]), { id: 'bad-bytes' });
    await f.send(REQ, '{"arguments": "{not json"}', { id: 'bad-json' });
    await f.send(REQ, '[1,2,3]', { id: 'bad-shape' });
    const good = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    for (const [id, text] of [
      ['bad-bytes', /UTF-8/],
      ['bad-json', /"arguments" is not valid JSON/],
      ['bad-shape', /must be a JSON object/],
    ] as const) {
      const [r] = await f.responses.final(id);
      expect(r?.error?.type).toBe('invalid-request');
      expect(r?.error?.message).toMatch(text);
    }
    expect((await f.responses.final(good))[0]?.response).toBe('fine');
  });

  it('dead-letters a request without an id, with the reason, and answers nothing', async () => {
    const f = await fixture(() => chunks('never'));
    const dlq = await f.transport.subscribe({ topic: `${REQ}-svc-request-DLQ`, subscription: 'inspect' });
    await f.send(REQ, '{"arguments":"{}"}', { other: 'x' });
    const it = dlq[Symbol.asyncIterator]();
    const m = (await it.next()).value!;
    expect(m.data.toString()).toBe('{"arguments":"{}"}');
    expect(m.properties['other']).toBe('x');
    expect(m.properties[DEAD_LETTER_REASON_PROPERTY]).toMatch(/no id/);
    expect(f.responses.byId.size).toBe(0);
    await dlq.close();
  });

  it('answers an argument that fails coercion with invalid-arguments', async () => {
    const f = await fixture(() => chunks('x'));
    const id = await f.request(REQ, { name: 'x', times: 'lots' }, { mode: 'm1' });
    const [r] = await f.responses.final(id);
    expect(r?.error).toEqual({ type: 'invalid-arguments', message: 'tool parameter times must be a number, got "lots"' });
    const missing = await f.request(REQ, {}, { mode: 'm1' });
    expect((await f.responses.final(missing))[0]?.error?.message).toBe('argument name is missing from the call');
  });

  it('answers a request for a tool it does not have with unknown-tool', async () => {
    const f = await fixture(() => chunks('x'));
    const id = await f.request(REQ, { name: 'x' }, { mode: 'other' });
    expect((await f.responses.final(id))[0]?.error?.type).toBe('unknown-tool');
  });

  it('answers a hung tool with a timeout error, even one that ignores its signal, and keeps serving', async () => {
    let calls = 0;
    const f = await fixture(
      () => {
        calls++;
        if (calls === 1)
          return (async function* () {
            await new Promise(() => undefined);
            yield 'never';
          })();
        return chunks('quick');
      },
      { 'timeout-ms': 150 },
    );
    const hung = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    const next = await f.request(REQ, { name: 'y' }, { mode: 'm1' });
    expect(await f.responses.final(hung)).toEqual([
      { error: { type: 'timeout', message: 'tool greet did not finish within 150 ms' }, response: '', endOfStream: true },
    ]);
    expect((await f.responses.final(next))[0]?.response).toBe('quick');
  });

  it('aborts the signal the plugin got when its time is up', async () => {
    let signal: AbortSignal | undefined;
    const f = await fixture(
      (call) => {
        signal = call.signal;
        return (async function* () {
          await sleep(10_000, undefined, { signal: call.signal });
          yield 'late';
        })();
      },
      { 'timeout-ms': 100 },
    );
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    await f.responses.final(id);
    expect(signal?.aborted).toBe(true);
  });

  it('keeps an internal error message off the wire and logs it', async () => {
    const f = await fixture(() =>
      (async function* () {
        throw new Error('db password is hunter2');
      })(),
    );
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    const [r] = await f.responses.final(id);
    expect(r?.error).toEqual({ type: 'tool-service-error', message: 'internal error in the tool worker' });
    expect(f.lines().some((l) => l.includes('tool failed unexpectedly') && l.includes(id))).toBe(true);
  });

  it('passes a ToolFailedError message to the agent', async () => {
    const f = await fixture(() =>
      (async function* () {
        throw new ToolFailedError('the joke API is closed on Sundays');
      })(),
    );
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    expect((await f.responses.final(id))[0]?.error).toEqual({ type: 'tool-service-error', message: 'the joke API is closed on Sundays' });
  });

  it('nacks a rate-limited request and answers it on redelivery', async () => {
    let calls = 0;
    const f = await fixture(() => {
      calls++;
      if (calls === 1)
        return (async function* () {
          throw new RateLimitedError('slow down');
        })();
      return chunks('second time lucky');
    });
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    expect(await f.responses.final(id)).toEqual([{ error: null, response: 'second time lucky', endOfStream: true }]);
    expect(calls).toBe(2);
    await vi.waitFor(() => expect(f.worker.stats().nacked).toBe(1));
  });

  it('answers with the error once a retriable failure has used up its redeliveries', async () => {
    let calls = 0;
    const f = await fixture(
      () => {
        calls++;
        return (async function* () {
          throw new RateLimitedError('still busy');
        })();
      },
      {},
      { maxRedeliveries: 2 },
    );
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    expect((await f.responses.final(id))[0]?.error).toEqual({ type: 'rate-limited', message: 'still busy' });
    expect(calls).toBe(3);
  });

  it('refuses an observation larger than the limit with payload-too-large', async () => {
    const f = await fixture(() => chunks('x'.repeat(600), 'y'.repeat(600)), {}, { maxObservationBytes: 1000 });
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    expect((await f.responses.final(id))[0]?.error?.type).toBe('payload-too-large');
  });

  it('refuses an observation given whole and at once (no sink gathers it) when it is over the limit', async () => {
    const f = await fixture(() => 'z'.repeat(1001), {}, { maxObservationBytes: 1000 });
    const over = await f.request(REQ, { name: 'x' }, { mode: 'm1' });
    expect(await f.responses.final(over)).toEqual([
      { error: { type: 'payload-too-large', message: expect.stringMatching(/exceeds 1000 bytes/) as unknown }, response: '', endOfStream: true },
    ]);
    await f.close();
    // Counted in UTF-8 bytes, not UTF-16 units: 500 of "é" are 1,000 bytes and pass, 501 do not.
    const g = await fixture((call) => 'é'.repeat(Number(call.arguments['times'])), {}, { maxObservationBytes: 1000 });
    const fits = await g.request(REQ, { name: 'x', times: 500 }, { mode: 'm1' });
    expect(await g.responses.final(fits)).toEqual([{ error: null, response: 'é'.repeat(500), endOfStream: true }]);
    const tooBig = await g.request(REQ, { name: 'x', times: 501 }, { mode: 'm1' });
    expect((await g.responses.final(tooBig))[0]?.error?.type).toBe('payload-too-large');
  });

  it('streams an observation given whole and at once as one chunk and the final message', async () => {
    const f = await fixture(() => 'all at once');
    const id = await f.request(REQ, { name: 'x' }, { mode: 'm1' }, { 'toolwire-stream': 'true' });
    expect(await f.responses.final(id)).toEqual([
      { error: null, response: 'all at once', endOfStream: false },
      { error: null, response: '', endOfStream: true },
    ]);
  });

  it('refuses a request payload over the limit with payload-too-large under its id', async () => {
    const f = await fixture(() => chunks('x'), {}, { maxPayloadBytes: 100 });
    const id = await f.request(REQ, { name: 'x'.repeat(200) }, { mode: 'm1' });
    expect((await f.responses.final(id))[0]?.error?.type).toBe('payload-too-large');
  });

  /** A tool that takes 20 ms and records how many of its calls ran at once. */
  function overlapCounter(): { behaviour: () => AsyncIterable<string>; readonly peak: () => number } {
    let active = 0;
    let peak = 0;
    return {
      behaviour: () =>
        (async function* () {
          active++;
          peak = Math.max(peak, active);
          await sleep(20);
          active--;
          yield 'done';
        })(),
      peak: () => peak,
    };
  }

  it('runs no more requests of a service at once than its concurrency', async () => {
    const tool = overlapCounter();
    const f = await fixture(tool.behaviour, { concurrency: 3 });
    const ids = await Promise.all(Array.from({ length: 15 }, (_, i) => f.request(REQ, { name: `n${i}` }, { mode: 'm1' })));
    for (const id of ids) await f.responses.final(id);
    expect(tool.peak()).toBe(3);
  });

  it('runs no more requests at once than the worker-wide concurrency, whatever the service allows', async () => {
    const tool = overlapCounter();
    const f = await fixture(tool.behaviour, { concurrency: 10 }, { concurrency: 4 });
    const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => f.request(REQ, { name: `n${i}` }, { mode: 'm1' })));
    const answers = await Promise.all(ids.map((id) => f.responses.final(id)));
    expect(answers.map((a) => a[0]?.response)).toEqual(ids.map(() => 'done'));
    expect(tool.peak()).toBe(4);
  });
});
