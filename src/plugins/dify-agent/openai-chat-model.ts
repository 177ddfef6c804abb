import { Agent, request } from 'undici';
import { RateLimitedError, ToolFailedError, UnavailableError } from '../../errors.js';
import { readSseData } from '../../sse/sse-reader.js';
import type { AgentModel } from './agent-model.js';
import type { TokenUsage } from './llm-result.js';
import { ChunkTranslator, chatRequest } from './openai-translate.js';
import type { LlmInvocation } from './llm-invocation.js';
import { chatCompletionChunk } from './openai-chunk.js';

type Json = Record<string, unknown>;

export interface ModelEndpoint {
  /** …/v1, no trailing slash. */
  readonly baseUrl: string;
  readonly key: string | undefined;
}

const MAX_ERROR_BYTES = 8 * 1024;

/**
 * An OpenAI-compatible chat completions endpoint (OpenAI, vLLM, Ollama, llama.cpp's server,
 * LM Studio) answering Dify LLM invocations: one streamed request per model round.
 */
export class OpenAiChatModel implements AgentModel {
  // Kept-alive connections: a model round should not pay a new TCP (and TLS) handshake.
  private readonly dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 32 });

  constructor(private readonly endpoint: ModelEndpoint) {}

  /** Dify LLMResultChunks for one invocation; `onUsage` gets the tokens when the endpoint reports them. */
  async *invoke(invocation: LlmInvocation, model: string, signal: AbortSignal, onUsage: (usage: TokenUsage) => void): AsyncGenerator<Json> {
    const started = Date.now();
    const res = await request(`${this.endpoint.baseUrl}/chat/completions`, {
      method: 'POST',
      dispatcher: this.dispatcher,
      signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(this.endpoint.key ? { authorization: `Bearer ${this.endpoint.key}` } : {}),
      },
      body: JSON.stringify(chatRequest(invocation, model)),
    }).catch((err: unknown) => {
      if (signal.aborted) throw err;
      throw new UnavailableError(`the model endpoint cannot be reached: ${(err as Error).message}`, { cause: err });
    });
    if (res.statusCode !== 200) {
      const detail = (await res.body.text().catch(() => '')).slice(0, MAX_ERROR_BYTES);
      const message = `the model endpoint answered HTTP ${res.statusCode}: ${detail}`;
      if (res.statusCode === 429) throw new RateLimitedError(message);
      if (res.statusCode >= 500) throw new UnavailableError(message);
      throw new ToolFailedError(message);
    }
    const t = new ChunkTranslator(model, started);
    // Read to the end, [DONE] included: leaving early would cost the kept-alive connection.
    for await (const data of readSseData(res.body, signal)) {
      // A cancelled round must not look finished (readSseData just stops, mid tool-call arguments perhaps).
      signal.throwIfAborted();
      if (data.trim() === '[DONE]') continue;
      let event: unknown;
      try {
        event = JSON.parse(data);
      } catch {
        throw new ToolFailedError(`the model endpoint sent an event that is not JSON: ${data.slice(0, 200)}`);
      }
      const c = chatCompletionChunk.safeParse(event);
      if (!c.success) throw new ToolFailedError(`the model endpoint sent an event that is not a chat completion chunk: ${data.slice(0, 200)}`);
      if (c.data.error) throw new ToolFailedError(`the model endpoint failed: ${JSON.stringify(c.data.error).slice(0, 500)}`);
      yield* t.accept(c.data);
    }
    signal.throwIfAborted();
    if (t.usage) onUsage(t.usage);
    yield t.finish(Date.now());
  }

  /** Ends the rounds still streaming too: `Agent.close()` would wait for them to end. */
  async close(): Promise<void> {
    await this.dispatcher.destroy();
  }
}
