import { describe, expect, it } from 'vitest';
import { StopCutter, completionRequest as translate, readAnswer } from '../../../../src/plugins/dify-agent/text-completion-translate.js';
import { readLlmInvocation } from '../../../../src/plugins/dify-agent/llm-invocation.js';

// As the inner API hands it on: the strategy's body, read at the boundary.
const completionRequest = (body: unknown) => translate(readLlmInvocation(body));

const msg = (role: string, content: unknown, more: Record<string, unknown> = {}) => ({ role, content, name: '', tool_calls: null, tool_call_id: '', ...more });
const answer = (o: Record<string, unknown>) => Buffer.from(JSON.stringify(o));

describe('Dify LLM invocations as TrustGraph text-completion requests', () => {
  const react = {
    prompt_messages: [msg('system', 'You research.\n\nTools:\ncalc: arithmetic'), msg('user', 'How is Paris?\nThought: x\nObservation: y')],
    tools: [],
    stop: ['Observation:'],
    completion_params: { temperature: 0.3 },
    stream: true,
  };

  it('puts the system messages in system and a lone user turn, as it is, in prompt; stop is ours to apply', () => {
    expect(completionRequest(react)).toEqual({
      request: {
        operation: 'completion',
        system: 'You research.\n\nTools:\ncalc: arithmetic',
        prompt: 'How is Paris?\nThought: x\nObservation: y',
        streaming: true,
      },
      stop: ['Observation:'],
    });
  });

  it('gives the same system bytes whatever the user turn holds (the prefix a cache keeps)', () => {
    const a = JSON.stringify(
      completionRequest({ ...react, prompt_messages: [react.prompt_messages[0], msg('user', '<context>\nA\n</context>\n\nq')] }).request,
    );
    const b = JSON.stringify(
      completionRequest({ ...react, prompt_messages: [react.prompt_messages[0], msg('user', '<context>\nB is longer\n</context>\n\nq')] }).request,
    );
    const prefix = '{"operation":"completion","system":"You research.\\n\\nTools:\\ncalc: arithmetic","prompt":"<context>\\n';
    expect(a.startsWith(prefix)).toBe(true);
    expect(b.startsWith(prefix)).toBe(true);
  });

  it('renders more turns as User/Assistant blocks, text parts joined, several system messages in order', () => {
    const { request } = completionRequest({
      prompt_messages: [
        msg('system', 'one'),
        msg('user', [
          { type: 'text', data: 'look ' },
          { type: 'text', data: 'here' },
        ]),
        msg('assistant', 'Thought: scratch'),
        msg('system', 'two'),
        msg('user', 'continue'),
      ],
      stop: null,
    });
    expect(request.system).toBe('one\n\ntwo');
    expect(request.prompt).toBe('User: look here\n\nAssistant: Thought: scratch\n\nUser: continue');
  });

  it('refuses tool definitions, tool calls and tool results: the service takes text only', () => {
    expect(() => completionRequest({ ...react, tools: [{ name: 'calc', description: '', parameters: {} }] })).toThrow(
      /takes text only, not tool definitions: this strategy calls tools natively \(function calling\); use a text-only strategy such as ReAct, or DIFY_AGENT_MODEL=openai/,
    );
    const call = { id: 'c1', type: 'function', function: { name: 'calc', arguments: '{}' } };
    expect(() => completionRequest({ prompt_messages: [msg('user', 'q'), msg('assistant', '', { tool_calls: [call] })] })).toThrow(
      /not tool calls or tool results/,
    );
    expect(() => completionRequest({ prompt_messages: [msg('tool', 'five', { tool_call_id: 'c1' })] })).toThrow(/not tool calls or tool results/);
  });

  it('refuses an image in the prompt', () => {
    expect(() => completionRequest({ prompt_messages: [msg('user', [{ type: 'image', url: 'https://x/y.png' }])] })).toThrow(
      /takes text only; this prompt holds a image part/,
    );
  });
});

describe('TrustGraph text-completion answers', () => {
  it('reads a streamed chunk, and the last message with the tokens', () => {
    expect(
      readAnswer(answer({ error: null, response: 'Thought', in_token: null, out_token: null, model: 'gpt-4o', end_of_stream: false, models: [] })),
    ).toEqual({ text: 'Thought', usage: undefined, model: 'gpt-4o', end: false });
    expect(readAnswer(answer({ error: null, response: '', in_token: 40, out_token: 6, model: 'gpt-4o', end_of_stream: true, models: [] }))).toEqual({
      text: '',
      usage: { promptTokens: 40, completionTokens: 6 },
      model: 'gpt-4o',
      end: true,
    });
  });

  it('throws an error answer with its type and message', () => {
    expect(() => readAnswer(answer({ error: { type: 'llm-error', message: 'quota exceeded' }, response: null, end_of_stream: true }))).toThrow(
      'the text-completion service failed (llm-error): quota exceeded',
    );
  });

  it('throws on an answer that is not a TextCompletionResponse', () => {
    expect(() => readAnswer(Buffer.from('not json'))).toThrow(/not a TextCompletionResponse/);
    expect(() => readAnswer(answer({ response: 5 }))).toThrow(/not a TextCompletionResponse/);
  });
});

describe('stop sequences, applied to a streamed answer', () => {
  it('passes text on at once when there are none', () => {
    const c = new StopCutter([]);
    expect(c.push('Observation: x')).toBe('Observation: x');
    expect(c.flush()).toBe('');
  });

  it('holds back what may start a stop sequence and ends the answer before it, across chunks', () => {
    const c = new StopCutter(['Observation:']);
    const out = [c.push('Action: {"a":1}\nObser'), c.push('vat'), c.push('ion: made up'), c.push('more')];
    expect(out.join('')).toBe('Action: {"a":1}\n');
    expect(c.stopped).toBe(true);
    expect(c.flush()).toBe('');
  });

  it('gives back the held tail when the answer ends without a stop sequence', () => {
    const c = new StopCutter(['Observation']);
    expect(c.push('Final Answer: Obs') + c.flush()).toBe('Final Answer: Obs');
  });

  it('cuts at the earliest of several', () => {
    const c = new StopCutter(['\nObservation', 'END']);
    expect(c.push('a END b\nObservation') + c.flush()).toBe('a ');
  });

  it('never splits a surrogate pair between two chunks', () => {
    const c = new StopCutter(['xy']);
    const first = c.push('ok 😀');
    expect(first).toBe('ok ');
    expect(first + c.flush()).toBe('ok 😀');
  });
});
