import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { ToolResponseError } from '../../../../src/client/tool-client.js';
import { ToolFailedError } from '../../../../src/errors.js';
import type { Tool, ToolService } from '../../../../src/catalog/descriptors.js';
import type { Fleet } from '../../../../src/plugins/plugin.js';
import { CallScope } from '../../../../src/plugins/dify-agent/agent-call-scope.js';
import { OpenAiChatModel } from '../../../../src/plugins/dify-agent/openai-chat-model.js';
import { captureLogger } from '../../../support/harness.js';
import { startScriptedModel, type ScriptedModel } from '../../../support/scripted-model.js';

const tool = (name: string) => ({ tool: { name, timeoutMs: undefined } as unknown as Tool, service: { timeoutMs: undefined } as unknown as ToolService });

describe('one agent call on the inner API', () => {
  let server: ScriptedModel;
  let model: OpenAiChatModel;
  beforeAll(async () => {
    server = await startScriptedModel({ calls: [] });
    model = new OpenAiChatModel({ baseUrl: server.url, key: 'model-key' });
  });
  afterAll(async () => {
    await model.close();
    await server.close();
  });

  const scope = (
    fleet: Partial<Fleet>,
    maximumIterations = 3,
    more: { maximumToolCalls?: number; deadlineAt?: number; modelParameters?: Record<string, unknown>; hops?: number } = {},
  ) => {
    const tokens: [string, string, number][] = [];
    const s = new CallScope({
      model,
      modelName: 'scripted',
      modelParameters: more.modelParameters ?? {},
      fleet: { tool: (n) => (n === 'known' || n === 'failing' ? tool(n) : undefined), call: async function* () {}, ...fleet } as Fleet,
      tools: new Set(['known', 'failing', 'agent']),
      maximumIterations,
      maximumToolCalls: more.maximumToolCalls ?? 15,
      deadlineAt: more.deadlineAt ?? Date.now() + 60_000,
      signal: new AbortController().signal,
      user: undefined,
      hops: more.hops ?? 0,
      log: captureLogger().log,
      span: trace.getTracer('test').startSpan('t'),
      events: { count: () => undefined, tokens: (m, k, n) => tokens.push([m, k, n]) },
    });
    return { s, tokens };
  };
  const all = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
    const out: T[] = [];
    for await (const x of it) out.push(x);
    return out;
  };
  const llmBody = { prompt_messages: [{ role: 'user', content: 'hi' }], tools: [], stream: true };

  it('counts the tokens each model round reports, with the Bearer key of the worker', async () => {
    const { s, tokens } = scope({});
    const chunks = await all(s.llm(llmBody, new AbortController().signal));
    expect(chunks.at(-1)).toMatchObject({ model: 'scripted', delta: { finish_reason: 'stop', usage: { prompt_tokens: 50, completion_tokens: 7 } } });
    expect(tokens).toEqual([
      ['scripted', 'prompt', 50],
      ['scripted', 'completion', 7],
    ]);
    expect(server.requests.at(-1)!.headers['authorization']).toBe('Bearer model-key');
  });

  it("sends the model the descriptor's model_parameters, whatever the strategy asks (a lower max_tokens only)", async () => {
    const modelParameters = { max_tokens: 512, temperature: 0.2 };
    const sent = async (asked: Record<string, unknown>, key: 'completion_params' | 'model_parameters' = 'completion_params') => {
      const { s } = scope({}, 3, { modelParameters });
      await all(s.llm({ ...llmBody, [key]: asked }, new AbortController().signal));
      const body = JSON.parse(server.requests.at(-1)!.body) as Record<string, unknown>;
      return { max_tokens: body['max_tokens'], temperature: body['temperature'], top_p: body['top_p'], seed: body['seed'] };
    };
    expect(await sent({ max_tokens: 1_000_000, temperature: 2, top_p: 0.1, seed: 7 })).toEqual({
      max_tokens: 512,
      temperature: 0.2,
      top_p: undefined,
      seed: undefined,
    });
    expect(await sent({ max_tokens: 1_000_000, temperature: 2 }, 'model_parameters')).toMatchObject({ max_tokens: 512, temperature: 0.2 });
    // Dify's strategies shrink max_tokens to fit the context: less is theirs to ask.
    expect(await sent({ max_tokens: 100, temperature: 0.2 })).toMatchObject({ max_tokens: 100 });
    expect(await sent({ max_tokens: 'lots' })).toMatchObject({ max_tokens: 512, temperature: 0.2 });
    // A descriptor that names none leaves every parameter to the endpoint's defaults.
    const { s } = scope({});
    await all(s.llm({ ...llmBody, completion_params: { max_tokens: 1_000_000, temperature: 2 } }, new AbortController().signal));
    expect(JSON.parse(server.requests.at(-1)!.body)).not.toHaveProperty('max_tokens');
    expect(JSON.parse(server.requests.at(-1)!.body)).not.toHaveProperty('temperature');
  });

  it('refuses a model round past maximum_iterations, whatever the strategy does', async () => {
    const { s } = scope({}, 1);
    await all(s.llm(llmBody, new AbortController().signal));
    await expect(all(s.llm(llmBody, new AbortController().signal))).rejects.toThrow('maximum_iterations (1) reached');
  });

  it('calls only the tools the descriptor names, on the toolwire provider', async () => {
    const { s } = scope({});
    await expect(all(s.tool({ provider: 'toolwire', tool: 'other', tool_parameters: {} }, new AbortController().signal))).rejects.toThrow(
      'there is not a tool named other for this agent',
    );
    await expect(all(s.tool({ provider: 'langgenius/google', tool: 'known', tool_parameters: {} }, new AbortController().signal))).rejects.toThrow(
      'there is not a tool named known',
    );
  });

  it('refuses a tool call of the wrong shape naming the field, and calls no tool for it', async () => {
    const calls: unknown[] = [];
    const { s } = scope({
      call: async function* (_t, args) {
        calls.push(args);
        yield 'done';
      },
    });
    const refused = (body: Record<string, unknown>) =>
      all(s.tool(body, new AbortController().signal)).then(
        () => undefined,
        (e: unknown) => e,
      );
    const list = await refused({ provider: 'toolwire', tool: 'known', tool_parameters: ['city', 'Paris'] });
    expect(list).toBeInstanceOf(ToolFailedError);
    expect((list as Error).message).toMatch(/^the strategy sent a tool call toolwire cannot read at tool_parameters: /);
    expect(((await refused({ provider: 'toolwire', tool_parameters: {} })) as Error).message).toMatch(/ at tool: /);
    expect(calls).toEqual([]);
    // Absent parameters are none; the right shape still reaches the tool.
    expect(await all(s.tool({ provider: 'toolwire', tool: 'known', tool_parameters: null }, new AbortController().signal))).toEqual([
      { type: 'text', message: { text: 'done' }, meta: null },
    ]);
    expect(calls).toEqual([{}]);
  });

  it("gives a tool's error answer to the strategy as an observation, and passes any other failure on", async () => {
    const { s } = scope({
      call: async function* (t) {
        if (t.tool.name === 'failing') throw new ToolResponseError('tool-error', 'no such city');
        yield 'part 1, ';
        throw new Error('the broker went away');
      },
    });
    expect(await all(s.tool({ provider: 'toolwire', tool: 'failing', tool_parameters: {} }, new AbortController().signal))).toEqual([
      { type: 'text', message: { text: 'tool invoke error: no such city' }, meta: null },
    ]);
    const seen: unknown[] = [];
    await expect(
      (async () => {
        for await (const x of s.tool({ provider: 'toolwire', tool: 'known', tool_parameters: {} }, new AbortController().signal)) seen.push(x);
      })(),
    ).rejects.toThrow('the broker went away');
    expect(seen).toEqual([{ type: 'text', message: { text: 'part 1, ' }, meta: null }]);
  });

  it('refuses a tool served by a dify-agent service, as a tool error the strategy reads', async () => {
    const called: string[] = [];
    const agent = {
      tool: { name: 'agent', timeoutMs: undefined } as unknown as Tool,
      service: { id: 'research', plugin: { kind: 'dify-agent', options: {} } } as unknown as ToolService,
    };
    const { s } = scope({
      tool: (n) => (n === 'agent' ? agent : tool(n)),
      call: async function* (t) {
        called.push(t.tool.name);
        yield 'ran';
      },
    });
    expect(await all(s.tool({ provider: 'toolwire', tool: 'agent', tool_parameters: {} }, new AbortController().signal))).toEqual([
      { type: 'text', message: { text: 'tool invoke error: research is a dify-agent service; an agent may not call an agent' }, meta: null },
    ]);
    expect(called).toEqual([]);
  });

  it("gives each tool call what is left of the agent call's deadline, or the tool's own timeout when shorter", async () => {
    const timeouts: (number | undefined)[] = [];
    const short = { tool: { name: 'known', timeoutMs: 2_000 } as unknown as Tool, service: { timeoutMs: undefined } as unknown as ToolService };
    const { s } = scope(
      {
        tool: (n) => (n === 'known' ? short : tool(n)),
        call: async function* (_t, _a, o) {
          timeouts.push(o.timeoutMs);
          yield 'ok';
        },
      },
      3,
      { deadlineAt: Date.now() + 30_000 },
    );
    await all(s.tool({ provider: 'toolwire', tool: 'failing', tool_parameters: {} }, new AbortController().signal));
    await all(s.tool({ provider: 'toolwire', tool: 'known', tool_parameters: {} }, new AbortController().signal));
    expect(timeouts[0]).toBeGreaterThan(0);
    expect(timeouts[0]).toBeLessThanOrEqual(30_000);
    expect(timeouts[1]).toBe(2_000);
  });

  it('sends each tool call one hop deeper than the agent call, and refuses one past the limit', async () => {
    const hops: (number | undefined)[] = [];
    const fleet = {
      call: async function* (_t: unknown, _a: unknown, o: { hops?: number }) {
        hops.push(o.hops);
        yield 'ok';
      },
    } as Partial<Fleet>;
    const call = (s: CallScope) => all(s.tool({ provider: 'toolwire', tool: 'known', tool_parameters: {} }, new AbortController().signal));
    expect(await call(scope(fleet).s)).toEqual([{ type: 'text', message: { text: 'ok' }, meta: null }]);
    expect(await call(scope(fleet, 3, { hops: 3 }).s)).toEqual([{ type: 'text', message: { text: 'ok' }, meta: null }]);
    expect(hops).toEqual([1, 4]);
    // An agent call four deep (an agent that reached the fleet again through its tools, four times).
    expect(await call(scope(fleet, 3, { hops: 4 }).s)).toEqual([
      {
        type: 'text',
        message: {
          text: expect.stringMatching(
            /^tool invoke error: hop-limit: this agent call is nested in 4 agent calls; a tool call from it would pass the limit of 4/,
          ),
        },
        meta: null,
      },
    ]);
    expect(hops).toEqual([1, 4]);
  });

  it('refuses tool calls past maximum_tool_calls', async () => {
    const { s } = scope(
      {
        call: async function* () {
          yield 'ok';
        },
      },
      3,
      { maximumToolCalls: 2 },
    );
    const once = () => all(s.tool({ provider: 'toolwire', tool: 'known', tool_parameters: {} }, new AbortController().signal));
    expect(await once()).toEqual([{ type: 'text', message: { text: 'ok' }, meta: null }]);
    expect(await once()).toEqual([{ type: 'text', message: { text: 'ok' }, meta: null }]);
    expect(await once()).toEqual([
      { type: 'text', message: { text: 'tool invoke error: maximum_tool_calls (2) reached: no more tool calls for this agent call' }, meta: null },
    ]);
    expect(s.toolCalls).toBe(2);
  });
});

describe('a model round the agent call cancels', () => {
  it('rejects instead of yielding a finished result, even when the whole answer is already in', async () => {
    const answer = [
      { id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] },
      { id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }] },
      { id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ]
      .map((c) => `data: ${JSON.stringify(c)}\n\n`)
      .join('');
    const body = `${answer}data: [DONE]\n\n`;
    const http = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const m = new OpenAiChatModel({ baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`, key: undefined });
    try {
      const ac = new AbortController();
      const seen: unknown[] = [];
      await expect(
        (async () => {
          for await (const c of m.invoke({ prompt_messages: [{ role: 'user', content: 'hi' }] }, 'm', ac.signal, () => undefined)) {
            seen.push(c);
            ac.abort();
          }
        })(),
      ).rejects.toThrow();
      expect(seen).toHaveLength(1);
    } finally {
      await m.close();
      await new Promise<void>((r) => http.close(() => r()));
    }
  });
});
