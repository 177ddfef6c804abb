import { describe, expect, it } from 'vitest';
import { ChunkTranslator, chatRequest as translate } from '../../../../src/plugins/dify-agent/openai-translate.js';
import { readLlmInvocation } from '../../../../src/plugins/dify-agent/llm-invocation.js';
import { chatCompletionChunk } from '../../../../src/plugins/dify-agent/openai-chunk.js';

// As the boundaries hand them on: the strategy's body and the endpoint's events, read first.
const chatRequest = (body: unknown, model: string) => translate(readLlmInvocation(body), model);
const event = (chunk: unknown) => chatCompletionChunk.parse(chunk);

describe('Dify LLM invocations as OpenAI chat completions', () => {
  const body = {
    tenant_id: 't',
    user_id: 'u',
    type: 'llm',
    provider: 'x',
    model: 'whatever-the-plugin-says',
    mode: 'chat',
    completion_params: { temperature: 0.2, max_tokens: 100, unknown_knob: 1 },
    prompt_messages: [
      { role: 'system', content: 'be brief', name: '', tool_calls: null, tool_call_id: '' },
      {
        role: 'user',
        content: [
          { type: 'text', data: 'look at ' },
          { type: 'image', url: 'https://x/y.png', detail: 'low' },
        ],
        name: '',
        tool_calls: null,
        tool_call_id: '',
      },
      {
        role: 'assistant',
        content: '',
        name: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        tool_call_id: '',
      },
      { role: 'tool', content: 'sunny', name: 'weather', tool_calls: null, tool_call_id: 'c1' },
    ],
    tools: [{ name: 'weather', description: 'the weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    stop: ['Observation:'],
    stream: true,
  };

  it('translates messages, tools, stop and known sampling parameters; the model is the descriptor’s', () => {
    expect(chatRequest(body, 'gpt-x')).toEqual({
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look at ' },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'weather', description: 'the weather', parameters: body.tools[0]!.parameters } }],
      stop: ['Observation:'],
      temperature: 0.2,
      max_tokens: 100,
    });
  });

  it('gives equal bytes for equal prompts (a prefix cache depends on it)', () => {
    expect(JSON.stringify(chatRequest(body, 'm'))).toBe(JSON.stringify(chatRequest(structuredClone(body), 'm')));
  });

  it('passes text on at once and joins tool-call fragments into whole calls with usage in the last chunk', () => {
    const t = new ChunkTranslator('gpt-x', 1000);
    const out = [
      ...t.accept(event({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] })),
      ...t.accept(event({ choices: [{ index: 0, delta: { content: 'Let me check.' } }] })),
      ...t.accept(
        event({
          choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] } }],
        }),
      ),
      ...t.accept(event({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] } }] })),
      ...t.accept(event({ choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_b', function: { name: 'calc', arguments: '{}' } }] } }] })),
      ...t.accept(event({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] } }] })),
      ...t.accept(event({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })),
      ...t.accept(event({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } })),
    ];
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      model: 'gpt-x',
      delta: { index: 0, message: { role: 'assistant', content: 'Let me check.', tool_calls: [] }, usage: null },
    });
    const last = t.finish(3500) as { delta: Record<string, unknown> };
    expect(last.delta['message']).toEqual({
      role: 'assistant',
      content: '',
      name: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_b', type: 'function', function: { name: 'calc', arguments: '{}' } },
      ],
    });
    expect(last.delta['finish_reason']).toBe('tool_calls');
    expect(last.delta['usage']).toMatchObject({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, currency: 'USD', latency: 2.5 });
    expect(t.usage).toEqual({ promptTokens: 12, completionTokens: 3 });
  });

  it('refuses an invocation in another shape, naming the field, before anything goes to the model', () => {
    expect(() => readLlmInvocation({ prompt_messages: [{ role: 'user', content: 42 }] })).toThrow(
      /the strategy sent an LLM invocation toolwire cannot read at prompt_messages\.0\.content/,
    );
    expect(() => readLlmInvocation({ tools: [{ description: 'no name' }] })).toThrow(/at tools\.0\.name/);
    expect(() => readLlmInvocation('not an object')).toThrow(/cannot read/);
  });

  it('reads parameters under either name, completion_params first', () => {
    expect(chatRequest({ model_parameters: { temperature: 0.5 } }, 'm')).toMatchObject({ temperature: 0.5 });
    expect(chatRequest({ completion_params: { top_p: 0.9 }, model_parameters: { top_p: 0.1 } }, 'm')).toMatchObject({ top_p: 0.9 });
  });

  it('refuses a stream event whose tool-call fragment has a wrong type', () => {
    expect(chatCompletionChunk.safeParse({ choices: [{ delta: { tool_calls: [{ index: -1 }] } }] }).success).toBe(false);
    expect(chatCompletionChunk.safeParse({ choices: [{ delta: { content: 7 } }] }).success).toBe(false);
  });
});
