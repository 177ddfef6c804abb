import { afterEach, describe, expect, it } from 'vitest';
import { ToolClient } from '../../../src/client/tool-client.js';
import { encodeChunk } from '../../../src/envelope/response.js';
import { ErrorCode, ToolwireError } from '../../../src/errors.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { CANCEL_PROPERTY, SEQ_PROPERTY } from '../../../src/envelope/properties.js';
import { abortable } from '../../../src/async/abortable.js';
import { cancelTopic } from '../../../src/transport/topic-name.js';
import type { Producer } from '../../../src/transport/transport.js';

const REQ = 'persistent://tg/flow/client-request';
const RES = 'non-persistent://tg/response/client';

/** A responder that answers each request with the given messages: [text, end, seq?]. */
async function answerWith(t: MemoryTransport, messages: readonly (readonly [string, boolean, number?])[]): Promise<void> {
  const sub = await t.subscribe({ topic: REQ, subscription: 'responder' });
  const out = await t.producer(RES);
  void (async () => {
    for await (const m of sub) {
      await m.ack();
      const id = m.properties['id']!;
      for (const [text, end, seq] of messages) {
        await out.send({ data: encodeChunk(text, end), properties: seq === undefined ? { id } : { id, [SEQ_PROPERTY]: String(seq) } });
      }
    }
  })();
}

describe('ToolClient and numbered streams', () => {
  let client: ToolClient | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  const call = (t: MemoryTransport) => {
    client = new ToolClient(t);
    return client.call({ requestQueue: REQ, responseQueue: RES, config: {}, arguments: {}, stream: true, timeoutMs: 5_000 });
  };

  it('joins a stream numbered 0, 1, 2', async () => {
    const t = new MemoryTransport();
    await answerWith(t, [
      ['a', false, 0],
      ['b', false, 1],
      ['', true, 2],
    ]);
    expect(await call(t)).toBe('ab');
  });

  it('joins unnumbered messages (another worker, or a single answer) as before', async () => {
    const t = new MemoryTransport();
    await answerWith(t, [
      ['a', false],
      ['b', true],
    ]);
    expect(await call(t)).toBe('ab');
  });

  it('fails, retriable, when a message of the stream is missing, rather than return a shortened text', async () => {
    const t = new MemoryTransport();
    await answerWith(t, [
      ['a', false, 0],
      ['c', true, 2],
    ]);
    const err = await call(t).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolwireError);
    expect((err as ToolwireError).code).toBe(ErrorCode.Transport);
    expect((err as ToolwireError).retriable).toBe(true);
    expect((err as Error).message).toMatch(/message 1 of the answer never arrived/);
  });

  it('fails at once, naming the field, when the answer to its request is in a form it cannot read', async () => {
    const t = new MemoryTransport();
    const sub = await t.subscribe({ topic: REQ, subscription: 'responder' });
    const out = await t.producer(RES);
    void (async () => {
      for await (const m of sub) {
        await m.ack();
        await out.send({ data: Buffer.from('{"response": 42, "end_of_stream": true}'), properties: { id: m.properties['id']! } });
      }
    })();
    const err = await call(t).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolwireError);
    expect((err as ToolwireError).code).toBe(ErrorCode.ToolFailed);
    expect((err as ToolwireError).retriable).toBe(false);
    expect((err as Error).message).toMatch(/^the tool service answered in a form toolwire cannot read: .*response/);
  });

  it('fails when the stream starts over, rather than splice two answers', async () => {
    const t = new MemoryTransport();
    await answerWith(t, [
      ['a', false, 0],
      ['b', false, 1],
      ['a', false, 0],
      ['b', true, 1],
    ]);
    await expect(call(t)).rejects.toThrow(/started over/);
  });
});

/**
 * The request topic's receipts never come, though each request is delivered: what an agent
 * meets when the broker hands the request to a worker before its receipt reaches the agent.
 */
class UnconfirmedRequests extends MemoryTransport {
  override async producer(topic: string): Promise<Producer> {
    const inner = await super.producer(topic);
    if (topic !== REQ) return inner;
    return {
      topic,
      send: (message, signal) => {
        void inner.send(message);
        return abortable(new Promise<void>(() => undefined), signal, `send to ${topic}`);
      },
    };
  }
}

describe('ToolClient, aborted before the request is confirmed', () => {
  it('ends as an aborted call, and cancels the request a worker may already have', async () => {
    const t = new UnconfirmedRequests();
    const requests = await t.subscribe({ topic: REQ, subscription: 'worker' });
    const cancels = await t.subscribe({ topic: cancelTopic(REQ)!, subscription: 'worker-cancels' });
    const client = new ToolClient(t);
    try {
      const abort = new AbortController();
      const call = client.call({ requestQueue: REQ, responseQueue: RES, config: {}, arguments: {}, signal: abort.signal, timeoutMs: 5_000 });
      const taken = (await requests[Symbol.asyncIterator]().next()).value!;
      abort.abort();
      await expect(call).rejects.toThrow(/call aborted/);
      const cancel = (await cancels[Symbol.asyncIterator]().next()).value!;
      expect(cancel.properties[CANCEL_PROPERTY]).toBe(taken.properties['id']);
    } finally {
      await client.close();
    }
  });
});
