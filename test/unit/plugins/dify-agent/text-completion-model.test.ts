import { afterEach, describe, expect, it } from 'vitest';
import { ToolClient } from '../../../../src/client/tool-client.js';
import { fleetOn } from '../../../../src/assembly/fleet.js';
import { AbortedError } from '../../../../src/errors.js';
import { TextCompletionModel } from '../../../../src/plugins/dify-agent/text-completion-model.js';
import type { TokenUsage } from '../../../../src/plugins/dify-agent/llm-result.js';
import { MemoryTransport } from '../../../../src/transport/memory-transport.js';

const topics = {
  request: 'non-persistent://tg/request/text-completion:default:default',
  response: 'non-persistent://tg/response/text-completion:default:default',
};
type Json = Record<string, unknown>;

/**
 * A stand-in for a TrustGraph text-completion processor (trustgraph-base 2.11.1
 * llm_service.py): each request answered on the response topic with its `id`, as the given
 * messages, recorded as it came.
 */
async function tgService(t: MemoryTransport, answers: readonly Json[], hold = false): Promise<{ requests: Json[] }> {
  const requests: Json[] = [];
  const sub = await t.subscribe({ topic: topics.request, subscription: 'text-completion--default--default--request' });
  const out = await t.producer(topics.response);
  void (async () => {
    for await (const m of sub) {
      await m.ack();
      requests.push({ body: JSON.parse(m.data.toString('utf8')) as Json, id: m.properties['id'] });
      if (hold) continue;
      for (const a of answers) await out.send({ data: JSON.stringify(a), properties: { id: m.properties['id']! } });
    }
  })();
  return { requests };
}

const chunk = (response: string) => ({ error: null, response, in_token: null, out_token: null, model: 'gpt-4o', end_of_stream: false, models: [] });
const last = { error: null, response: '', in_token: 40, out_token: 6, model: 'gpt-4o', end_of_stream: true, models: [] };
const body = {
  prompt_messages: [
    { role: 'system', content: 'Use the tools.' },
    { role: 'user', content: 'How is Paris?' },
  ],
  tools: [],
  stop: ['Observation:'],
  stream: true,
};

describe('TrustGraph text-completion as the agent model', () => {
  let client: ToolClient | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });
  const model = (t: MemoryTransport) => {
    client = new ToolClient(t);
    return new TextCompletionModel(
      fleetOn(client, () => undefined),
      topics,
    );
  };
  const run = async (m: TextCompletionModel, b: Json, signal = new AbortController().signal) => {
    const usage: TokenUsage[] = [];
    const out: Json[] = [];
    for await (const c of m.invoke(b, 'tg-model', signal, (u) => usage.push(u))) out.push(c);
    return { out, usage };
  };
  const text = (chunks: Json[]) => chunks.map((c) => ((c['delta'] as Json)['message'] as Json)['content']).join('');

  it('sends system and prompt, streaming, and passes each streamed chunk on with the tokens at the end', async () => {
    const t = new MemoryTransport();
    const svc = await tgService(t, [chunk('Thought: I need calc.\n'), chunk('Action: {"action":"calc"}'), last]);
    const { out, usage } = await run(model(t), { ...body, stop: [] });
    expect(svc.requests).toHaveLength(1);
    expect(svc.requests[0]!['body']).toEqual({ operation: 'completion', system: 'Use the tools.', prompt: 'How is Paris?', streaming: true });
    // Each chunk on as it came, then the closing one.
    expect(svc.requests[0]!['id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.map((c) => (c['delta'] as Json)['index'])).toEqual([0, 1, 2]);
    expect(text(out)).toBe('Thought: I need calc.\nAction: {"action":"calc"}');
    expect(out.at(-1)).toMatchObject({
      model: 'tg-model',
      delta: {
        message: { role: 'assistant', content: '', tool_calls: [] },
        finish_reason: 'stop',
        usage: { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 },
      },
    });
    expect(usage).toEqual([{ promptTokens: 40, completionTokens: 6 }]);
  });

  it('reads a one-message answer (a processor that does not stream)', async () => {
    const t = new MemoryTransport();
    await tgService(t, [{ ...last, response: 'Final Answer: 5' }]);
    const { out, usage } = await run(model(t), body);
    expect(text(out)).toBe('Final Answer: 5');
    expect(usage).toEqual([{ promptTokens: 40, completionTokens: 6 }]);
  });

  it('ends the round at a stop sequence without waiting for the rest', async () => {
    const t = new MemoryTransport();
    // No end_of_stream ever comes: the round must end at the stop sequence all the same.
    await tgService(t, [chunk('Action: {"action":"calc"}\nObserv'), chunk('ation: invented')]);
    const { out, usage } = await run(model(t), body);
    expect(text(out)).toBe('Action: {"action":"calc"}\n');
    expect(usage).toEqual([]);
    expect(out.at(-1)).toMatchObject({ delta: { finish_reason: 'stop', usage: { prompt_tokens: 0, completion_tokens: 0 } } });
  });

  it("gives the strategy the service's error", async () => {
    const t = new MemoryTransport();
    await tgService(t, [
      chunk('Thou'),
      { error: { type: 'llm-error', message: 'the model is down' }, response: null, in_token: null, out_token: null, model: null, end_of_stream: true },
    ]);
    await expect(run(model(t), body)).rejects.toThrow('the text-completion service failed (llm-error): the model is down');
  });

  it('refuses a round with tool definitions before sending anything', async () => {
    const t = new MemoryTransport();
    const svc = await tgService(t, [last]);
    await expect(run(model(t), { ...body, tools: [{ name: 'calc', description: '', parameters: {} }] })).rejects.toThrow(/function calling/);
    expect(svc.requests).toHaveLength(0);
  });

  it('stops waiting when the agent call is cancelled, and when the plugin closes', async () => {
    const t = new MemoryTransport();
    const svc = await tgService(t, [], true);
    const m = model(t);
    const ac = new AbortController();
    const pending = run(m, body, ac.signal);
    while (svc.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    const second = run(m, body);
    while (svc.requests.length < 2) await new Promise((r) => setTimeout(r, 5));
    await m.close();
    await expect(second).rejects.toBeInstanceOf(AbortedError);
  });
});
