import type { LlmInvocation } from './llm-invocation.js';
import type { TokenUsage } from './llm-result.js';

type Json = Record<string, unknown>;

/**
 * Where a strategy's model rounds go (a worker setting, DIFY_AGENT_MODEL): an OpenAI-compatible
 * endpoint, or TrustGraph's text-completion service on the broker. Either turns one Dify LLM
 * invocation into LLMResultChunks.
 */
export interface AgentModel {
  /** Dify LLMResultChunks for one invocation; `onUsage` gets the tokens when the backend reports them. */
  invoke(invocation: LlmInvocation, model: string, signal: AbortSignal, onUsage: (usage: TokenUsage) => void): AsyncIterable<Json>;
  /** Ends the rounds still running too. */
  close(): Promise<void>;
}
