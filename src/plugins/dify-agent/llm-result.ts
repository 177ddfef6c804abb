/**
 * Dify's LLM answer shapes, whichever model backend fills them: LLMResultChunk and LLMUsage
 * (dify_plugin 0.10.1 entities/model/llm.py; the daemon validates them, model_entities/llm.go
 * at bdb5642a). Every backend yields chunks through here, so the strategy sees one format.
 */

type Json = Record<string, unknown>;

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** LLMUsage: prices unknown here, so zero. */
export function llmUsage(usage: TokenUsage, latencySeconds: number): Json {
  return {
    prompt_tokens: usage.promptTokens,
    prompt_unit_price: '0',
    prompt_price_unit: '0',
    prompt_price: '0',
    completion_tokens: usage.completionTokens,
    completion_unit_price: '0',
    completion_price_unit: '0',
    completion_price: '0',
    total_tokens: usage.promptTokens + usage.completionTokens,
    total_price: '0',
    currency: 'USD',
    latency: latencySeconds,
  };
}

export interface ChunkExtras {
  readonly toolCalls?: readonly Json[];
  readonly usage?: Json;
  readonly finishReason?: string;
}

/** One LLMResultChunk: an assistant delta, with tool calls, usage and finish reason on the last. */
export function resultChunk(model: string, index: number, content: string, extras: ChunkExtras = {}): Json {
  return {
    model,
    prompt_messages: [],
    system_fingerprint: null,
    delta: {
      index,
      message: { role: 'assistant', content, name: null, tool_calls: extras.toolCalls ?? [] },
      usage: extras.usage ?? null,
      finish_reason: extras.finishReason ?? null,
    },
  };
}
