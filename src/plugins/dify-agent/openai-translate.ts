/**
 * Dify's LLM invocation (prompt messages, tools, LLMResultChunk) to and from OpenAI's chat
 * completions. Shapes: dify-plugin-daemon pkg/entities/model_entities/llm.go (bdb5642a),
 * dify_plugin entities/model (0.10.1); OpenAI's chat completions streaming format.
 */

import { llmUsage, resultChunk, type ChunkExtras, type TokenUsage } from './llm-result.js';
import { jsonText } from '../../plain-object.js';

type Json = Record<string, unknown>;

/** Sampling parameters an OpenAI-compatible endpoint takes from Dify's completion_params. */
const PASSED = ['temperature', 'top_p', 'max_tokens', 'presence_penalty', 'frequency_penalty', 'seed', 'response_format'] as const;

function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: Json) => (part['type'] === 'text' ? jsonText(part['data']) : '')).join('');
  return '';
}

function userContent(content: unknown): unknown {
  if (!Array.isArray(content)) return text(content);
  return content.map((part: Json) => {
    if (part['type'] === 'image') {
      const url =
        typeof part['url'] === 'string' && part['url'] !== ''
          ? part['url']
          : `data:${jsonText(part['mime_type'], 'image/png')};base64,${jsonText(part['base64_data'])}`;
      return { type: 'image_url', image_url: { url, ...(part['detail'] ? { detail: part['detail'] } : {}) } };
    }
    return { type: 'text', text: jsonText(part['data']) };
  });
}

/** One Dify prompt message as an OpenAI chat message. */
export function chatMessage(message: Json): Json {
  switch (message['role']) {
    case 'system':
      return { role: 'system', content: text(message['content']) };
    case 'assistant': {
      const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as Json[]) : [];
      const out: Json = { role: 'assistant', content: text(message['content']) || (calls.length > 0 ? null : '') };
      if (calls.length > 0) {
        out['tool_calls'] = calls.map((call) => {
          const f = (call['function'] ?? {}) as Json;
          return { id: call['id'], type: 'function', function: { name: f['name'], arguments: f['arguments'] ?? '{}' } };
        });
      }
      return out;
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message['tool_call_id'], content: text(message['content']) };
    default:
      return { role: 'user', content: userContent(message['content']) };
  }
}

/**
 * The chat completions body for a Dify LLM invocation. Key order is fixed and nothing of the
 * call's own (time, ids) goes in, so equal prompts give equal bytes: what a prefix cache needs.
 */
export function chatRequest(body: Json, model: string): Json {
  const out: Json = {
    model,
    messages: ((body['prompt_messages'] as Json[] | null) ?? []).map(chatMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  const tools = (body['tools'] as Json[] | null) ?? [];
  if (tools.length > 0)
    out['tools'] = tools.map((tool) => ({
      type: 'function',
      function: { name: tool['name'], description: tool['description'] ?? '', parameters: tool['parameters'] ?? { type: 'object', properties: {} } },
    }));
  const stop = (body['stop'] as string[] | null) ?? [];
  if (stop.length > 0) out['stop'] = stop;
  const params = ((body['completion_params'] ?? body['model_parameters']) as Json | null) ?? {};
  for (const k of PASSED) if (params[k] !== undefined && params[k] !== null) out[k] = params[k];
  return out;
}

/**
 * OpenAI stream chunks in, Dify LLMResultChunks out. Text goes on at once; tool calls arrive
 * in fragments (id and name first, arguments in pieces) and go out whole, with the usage and
 * finish reason, in the last chunk: the strategies read each chunk's tool calls as complete.
 */
export class ChunkTranslator {
  private readonly calls: { id: string; name: string; args: string }[] = [];
  private finishReason: string | null = null;
  usage: TokenUsage | undefined;
  private index = 0;

  constructor(
    private readonly model: string,
    private readonly startedAt: number,
  ) {}

  private chunk(content: string, extras: ChunkExtras = {}): Json {
    return resultChunk(this.model, this.index++, content, extras);
  }

  accept(chunk: Json): Json[] {
    const u = chunk['usage'] as Json | null | undefined;
    if (u) this.usage = { promptTokens: Number(u['prompt_tokens'] ?? 0), completionTokens: Number(u['completion_tokens'] ?? 0) };
    const out: Json[] = [];
    for (const choice of (chunk['choices'] as Json[] | undefined) ?? []) {
      const delta = (choice['delta'] ?? {}) as Json;
      if (typeof delta['content'] === 'string' && delta['content'] !== '') out.push(this.chunk(delta['content']));
      for (const tc of (delta['tool_calls'] as Json[] | undefined) ?? []) {
        const i = typeof tc['index'] === 'number' ? tc['index'] : this.calls.length;
        const f = (tc['function'] ?? {}) as Json;
        const call = (this.calls[i] ??= { id: '', name: '', args: '' });
        if (typeof tc['id'] === 'string') call.id = tc['id'];
        if (typeof f['name'] === 'string') call.name += f['name'];
        if (typeof f['arguments'] === 'string') call.args += f['arguments'];
      }
      if (typeof choice['finish_reason'] === 'string') this.finishReason = choice['finish_reason'];
    }
    return out;
  }

  /** The closing chunk: whole tool calls, usage, finish reason. */
  finish(now: number): Json {
    const toolCalls = this.calls
      .filter(Boolean)
      .map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args || '{}' } }));
    return this.chunk('', {
      toolCalls,
      usage: llmUsage(this.usage ?? { promptTokens: 0, completionTokens: 0 }, (now - this.startedAt) / 1000),
      finishReason: this.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    });
  }
}
