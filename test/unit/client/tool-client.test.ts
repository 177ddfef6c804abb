import { afterEach, describe, expect, it } from 'vitest';
import { ToolClient } from '../../../src/client/tool-client.js';
import { encodeChunk } from '../../../src/envelope/response.js';
import { ErrorCode, ToolwireError } from '../../../src/errors.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { SEQ_PROPERTY } from '../../../src/envelope/properties.js';

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
