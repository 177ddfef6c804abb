/**
 * Dify's LLM invocation to and from TrustGraph's text-completion service. Shapes:
 * trustgraph-base 2.11.1 `trustgraph/schema/llm.py` (TextCompletionRequest, TextCompletionResponse),
 * `trustgraph/schema/core/primitives.py` (Error), `trustgraph/base/llm_service.py` (how a
 * processor answers: chunks, then one with `end_of_stream`; an error as one last message).
 * On Pulsar each is the dataclass as JSON, correlated by the `id` property
 * (`trustgraph/base/async_pulsar_backend.py`).
 */
import { z } from 'zod';
import { ToolFailedError } from '../../errors.js';
import type { TokenUsage } from './llm-result.js';
import { jsonText } from '../../plain-object.js';
import type { LlmInvocation, PromptMessage } from './llm-invocation.js';

/** What goes on the request topic. `operation` is 2.x's; the model and temperature are the flow's parameters. */
export interface TextCompletionRequest {
  readonly operation: 'completion';
  readonly system: string;
  readonly prompt: string;
  readonly streaming: boolean;
}

/** Why a prompt cannot go to a text-only model: the strategy asked for what only chat models with tools do. */
const TEXT_ONLY = 'the model is TrustGraph text-completion (DIFY_AGENT_MODEL=text-completion), which takes text only';
const USE_INSTEAD = 'use a text-only strategy such as ReAct, or DIFY_AGENT_MODEL=openai';

function textOf(content: PromptMessage['content']): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part) => {
      if (part.type !== 'text') throw new ToolFailedError(`${TEXT_ONLY}; this prompt holds a ${part.type} part`);
      return jsonText(part.data);
    })
    .join('');
}

const LABEL: Readonly<Record<string, string>> = { user: 'User', assistant: 'Assistant' };

/**
 * TrustGraph's (`system`, `prompt`) from Dify prompt messages: the system messages, in order,
 * make `system`, so it is the same bytes on every call that has the same instruction and tools
 * (TrustGraph's processors put `system` first: the prefix a model's cache keeps). The rest is
 * the `prompt`: a lone user turn as it is (the usual ReAct shape, the scratchpad in it), more
 * turns as `User: …` / `Assistant: …` blocks. `stop` is not a TrustGraph field: the caller
 * applies it (StopCutter). Tools, tool calls and non-text parts are refused.
 */
export function completionRequest(invocation: LlmInvocation): { request: TextCompletionRequest; stop: string[] } {
  const tools = invocation.tools ?? [];
  if (tools.length > 0) throw new ToolFailedError(`${TEXT_ONLY}, not tool definitions: this strategy calls tools natively (function calling); ${USE_INSTEAD}`);
  const system: string[] = [];
  const turns: { role: string; text: string }[] = [];
  for (const m of invocation.prompt_messages ?? []) {
    const role = m.role;
    if (role === 'system') {
      system.push(textOf(m.content));
      continue;
    }
    if (role === 'tool' || (m.tool_calls ?? []).length > 0) {
      throw new ToolFailedError(`${TEXT_ONLY}, not tool calls or tool results: this strategy calls tools natively (function calling); ${USE_INSTEAD}`);
    }
    turns.push({ role, text: textOf(m.content) });
  }
  const lone = turns.length === 1 && turns[0]!.role === 'user';
  const prompt = lone ? turns[0]!.text : turns.map((turn) => `${LABEL[turn.role] ?? 'User'}: ${turn.text}`).join('\n\n');
  const stop = (invocation.stop ?? []).filter((sequence) => sequence !== '');
  return { request: { operation: 'completion', system: system.join('\n\n'), prompt, streaming: true }, stop };
}

const answerSchema = z.object({
  error: z.object({ type: z.string().nullish(), message: z.string().nullish() }).nullish(),
  response: z.string().nullish(),
  in_token: z.number().int().nullish(),
  out_token: z.number().int().nullish(),
  model: z.string().nullish(),
  end_of_stream: z.boolean().nullish(),
});

export interface TextCompletionAnswer {
  readonly text: string;
  /** Present on the message that reports them (the last, in TrustGraph's processors). */
  readonly usage: TokenUsage | undefined;
  readonly model: string | undefined;
  readonly end: boolean;
}

/** One answer message; an error answer (`llm-error`, `not-implemented`) is thrown. */
export function readAnswer(data: Buffer): TextCompletionAnswer {
  let parsed: z.infer<typeof answerSchema>;
  try {
    parsed = answerSchema.parse(JSON.parse(data.toString('utf8')));
  } catch (err) {
    throw new ToolFailedError(`the text-completion service sent an answer that is not a TextCompletionResponse: ${(err as Error).message.slice(0, 300)}`);
  }
  if (parsed.error && (parsed.error.type || parsed.error.message)) {
    throw new ToolFailedError(`the text-completion service failed (${parsed.error.type ?? 'error'}): ${parsed.error.message ?? ''}`);
  }
  const hasUsage = typeof parsed.in_token === 'number' || typeof parsed.out_token === 'number';
  return {
    text: parsed.response ?? '',
    usage: hasUsage ? { promptTokens: parsed.in_token ?? 0, completionTokens: parsed.out_token ?? 0 } : undefined,
    model: parsed.model ?? undefined,
    end: parsed.end_of_stream === true,
  };
}

/**
 * The stop sequences, applied here since TrustGraph's request has none: text goes on as it
 * comes, except a tail as long as the longest stop sequence less one (it may be the start of
 * one); at a stop sequence the answer ends, without it.
 */
export class StopCutter {
  private held = '';
  private readonly keep: number;
  stopped = false;

  constructor(private readonly stops: readonly string[]) {
    this.keep = Math.max(0, ...stops.map((sequence) => sequence.length - 1));
  }

  /** The text that may go on now. */
  push(text: string): string {
    if (this.stopped) return '';
    if (this.stops.length === 0) return text;
    const all = this.held + text;
    let cut = -1;
    for (const s of this.stops) {
      const i = all.indexOf(s);
      if (i >= 0 && (cut < 0 || i < cut)) cut = i;
    }
    if (cut >= 0) {
      this.stopped = true;
      this.held = '';
      return all.slice(0, cut);
    }
    let safe = Math.max(0, all.length - this.keep);
    // Never split a surrogate pair across two chunks: each chunk is decoded on its own.
    const code = all.charCodeAt(safe - 1);
    if (safe > 0 && code >= 0xd800 && code <= 0xdbff) safe--;
    this.held = all.slice(safe);
    return all.slice(0, safe);
  }

  /** What was held back, once the answer ended without a stop sequence. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }
}
