import type { Fleet } from '../plugin.js';
import type { AgentModel } from './agent-model.js';
import type { LlmInvocation } from './llm-invocation.js';
import { llmUsage, resultChunk, type TokenUsage } from './llm-result.js';
import { StopCutter, completionRequest, readAnswer } from './text-completion-translate.js';

type Json = Record<string, unknown>;

/** TrustGraph's text-completion queues: a flow's, or the ones a deployment names. */
export interface TextCompletionTopics {
  readonly request: string;
  readonly response: string;
}

/**
 * TrustGraph's own text-completion service on the broker answering Dify LLM invocations, so a
 * strategy in a TrustGraph deployment uses the model the flow already has. Text only: a round
 * with tool definitions is refused (the strategy gets the error). TrustGraph streams when its
 * processor can (each chunk goes on at once) and answers in one message otherwise.
 */
export class TextCompletionModel implements AgentModel {
  /** Aborted by close(): a plugin closed on reload ends its rounds. */
  private readonly closing = new AbortController();

  constructor(
    private readonly fleet: Pick<Fleet, 'exchange'>,
    private readonly topics: TextCompletionTopics,
  ) {}

  async *invoke(invocation: LlmInvocation, model: string, signal: AbortSignal, onUsage: (usage: TokenUsage) => void): AsyncGenerator<Json> {
    const started = Date.now();
    const { request, stop } = completionRequest(invocation);
    const cutter = new StopCutter(stop);
    let index = 0;
    let usage: TokenUsage | undefined;
    const round = AbortSignal.any([signal, this.closing.signal]);
    for await (const data of this.fleet.exchange(this.topics, JSON.stringify(request), { signal: round })) {
      const answer = readAnswer(data);
      if (answer.usage) usage = answer.usage;
      const text = cutter.push(answer.text);
      if (text !== '') yield resultChunk(model, index++, text);
      // At a stop sequence the round is done: TrustGraph cannot be told to stop, and its
      // tokens come only at the end, so that round's tokens go uncounted rather than waited for.
      if (answer.end || cutter.stopped) break;
    }
    round.throwIfAborted();
    const rest = cutter.flush();
    if (rest !== '') yield resultChunk(model, index++, rest);
    if (usage) onUsage(usage);
    yield resultChunk(model, index, '', {
      usage: llmUsage(usage ?? { promptTokens: 0, completionTokens: 0 }, (Date.now() - started) / 1000),
      finishReason: 'stop',
    });
  }

  async close(): Promise<void> {
    this.closing.abort();
  }
}
