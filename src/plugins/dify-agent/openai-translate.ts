/**
 * Dify's LLM invocation (prompt messages, tools, LLMResultChunk) to and from OpenAI's chat
 * completions. Shapes: dify-plugin-daemon pkg/entities/model_entities/llm.go (bdb5642a),
 * dify_plugin entities/model (0.10.1); OpenAI's chat completions streaming format.
 */

import { llmUsage, resultChunk, type ChunkExtras, type TokenUsage } from './llm-result.js';
import { jsonText } from '../../plain-object.js';
import type { ContentPart, LlmInvocation, PromptMessage } from './llm-invocation.js';
import type { ChatCompletionChunk } from './openai-chunk.js';

type Json = Record<string, unknown>;

/** Sampling parameters an OpenAI-compatible endpoint takes from Dify's completion_params. */
const PASSED = ['temperature', 'top_p', 'max_tokens', 'presence_penalty', 'frequency_penalty', 'seed', 'response_format'] as const;

function text(content: PromptMessage['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part.type === 'text' ? jsonText(part.data) : '')).join('');
  return '';
}

function userPart(part: ContentPart): Json {
  if (part.type === 'image') {
    const url = part.url ? part.url : `data:${part.mime_type ?? 'image/png'};base64,${part.base64_data ?? ''}`;
    return { type: 'image_url', image_url: { url, ...(part.detail ? { detail: part.detail } : {}) } };
  }
  return { type: 'text', text: jsonText(part.data) };
}

/** One Dify prompt message as an OpenAI chat message. */
export function chatMessage(message: PromptMessage): Json {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: text(message.content) };
    case 'assistant': {
      const calls = message.tool_calls ?? [];
      const out: Json = { role: 'assistant', content: text(message.content) || (calls.length > 0 ? null : '') };
      if (calls.length > 0) {
        out['tool_calls'] = calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: call.function.arguments ?? '{}' },
        }));
      }
      return out;
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: text(message.content) };
    default:
      return { role: 'user', content: Array.isArray(message.content) ? message.content.map(userPart) : text(message.content) };
  }
}

/**
 * The chat completions body for a Dify LLM invocation. Key order is fixed and nothing of the
 * call's own (time, ids) goes in, so equal prompts give equal bytes: what a prefix cache needs.
 */
export function chatRequest(invocation: LlmInvocation, model: string): Json {
  const out: Json = {
    model,
    messages: (invocation.prompt_messages ?? []).map(chatMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  const tools = invocation.tools ?? [];
  if (tools.length > 0)
    out['tools'] = tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description ?? '', parameters: tool.parameters ?? { type: 'object', properties: {} } },
    }));
  const stop = invocation.stop ?? [];
  if (stop.length > 0) out['stop'] = stop;
  const params = invocation.completion_params ?? invocation.model_parameters ?? {};
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

  accept(chunk: ChatCompletionChunk): Json[] {
    const u = chunk.usage;
    if (u) this.usage = { promptTokens: u.prompt_tokens ?? 0, completionTokens: u.completion_tokens ?? 0 };
    const out: Json[] = [];
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (delta?.content) out.push(this.chunk(delta.content));
      for (const tc of delta?.tool_calls ?? []) {
        const call = (this.calls[tc.index ?? this.calls.length] ??= { id: '', name: '', args: '' });
        if (typeof tc.id === 'string') call.id = tc.id;
        if (typeof tc.function?.name === 'string') call.name += tc.function.name;
        if (typeof tc.function?.arguments === 'string') call.args += tc.function.arguments;
      }
      if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
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
