import { randomUUID } from 'node:crypto';
import { context, trace, type Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { ToolResponseError } from '../../client/tool-client.js';
import type { ToolService } from '../../catalog/descriptors.js';
import type { Fleet, PluginEvents } from '../plugin.js';
import { DIFY_AGENT_KIND } from './agent-options.js';
import type { AgentCallScope } from './inner-api-server.js';
import type { AgentModel } from './agent-model.js';
import { FLEET_PROVIDER } from './tool-entities.js';
import { withClampedParams } from './completion-params.js';
import { readLlmInvocation } from './llm-invocation.js';
import { readToolInvocation } from './tool-invocation.js';
import { MAX_HOPS } from '../../envelope/hops.js';

type Json = Record<string, unknown>;

export interface CallScopeOptions {
  readonly model: AgentModel;
  readonly modelName: string;
  /** The descriptor's model_parameters: what every model round gets, whatever the strategy asks (completion-params.ts). */
  readonly modelParameters: Readonly<Record<string, unknown>>;
  readonly fleet: Fleet;
  /** The tools this call may use, by name. */
  readonly tools: ReadonlySet<string>;
  readonly maximumIterations: number;
  readonly maximumToolCalls: number;
  /** When the agent call's deadline passes (Date.now() ms): no sub-call may outlive it. */
  readonly deadlineAt: number;
  /** The agent call's signal: its end, timeout or cancellation stops every model and tool call it started. */
  readonly signal: AbortSignal;
  readonly user: string | undefined;
  /** Agent calls this one is nested in (0 for an agent's own request); its tool calls go out with one more. */
  readonly hops: number;
  readonly log: Logger;
  readonly span: Span;
  readonly events: PluginEvents | undefined;
}

const tracer = trace.getTracer('toolwire');

/**
 * What one agent call answers on the inner API: its model rounds (bounded by
 * maximum_iterations, whatever the strategy does) and its tool calls on the fleet (only the
 * tools the descriptor names).
 */
export class CallScope implements AgentCallScope {
  /** The daemon session's user_id: how the inner API finds this call. Unguessable. */
  readonly token = `toolwire-agent-${randomUUID()}`;
  modelRounds = 0;
  toolCalls = 0;

  constructor(private readonly options: CallScopeOptions) {}

  async *llm(body: Json, signal: AbortSignal): AsyncGenerator<Json> {
    const round = ++this.modelRounds;
    if (round > this.options.maximumIterations)
      throw new Error(`maximum_iterations (${this.options.maximumIterations}) reached: no more model rounds for this call`);
    const span = tracer.startSpan(
      'agent.model',
      { attributes: { 'agent.round': round, 'gen_ai.request.model': this.options.modelName } },
      trace.setSpan(context.active(), this.options.span),
    );
    const started = performance.now();
    try {
      yield* this.options.model.invoke(
        withClampedParams(readLlmInvocation(body), this.options.modelParameters),
        this.options.modelName,
        AbortSignal.any([this.options.signal, signal]),
        (usage) => {
          this.options.events?.tokens?.(this.options.modelName, 'prompt', usage.promptTokens);
          this.options.events?.tokens?.(this.options.modelName, 'completion', usage.completionTokens);
          span.setAttributes({ 'gen_ai.usage.input_tokens': usage.promptTokens, 'gen_ai.usage.output_tokens': usage.completionTokens });
          this.options.log.debug({ round, promptTokens: usage.promptTokens, completionTokens: usage.completionTokens }, 'agent model round');
        },
      );
    } catch (err) {
      this.options.log.warn({ err, round }, 'agent model round failed');
      throw err;
    } finally {
      span.setAttribute('agent.elapsed_ms', performance.now() - started);
      span.end();
    }
  }

  async *tool(body: Json, signal: AbortSignal): AsyncGenerator<Json> {
    const { tool: name, provider, tool_parameters: args } = readToolInvocation(body);
    const target = this.options.tools.has(name) && provider === FLEET_PROVIDER ? this.options.fleet.tool(name) : undefined;
    if (!target) throw new Error(`there is not a tool named ${name} for this agent`);
    const refused = this.refusal(target.service);
    if (refused) {
      // An answer the strategy reads as a failed tool, so the model can finish without it.
      this.options.log.warn({ agentTool: name, refused }, 'agent tool call refused');
      yield { type: 'text', message: { text: `tool invoke error: ${refused}` }, meta: null };
      return;
    }
    this.toolCalls++;
    // The agent call's deadline bounds each sub-call; always given, so the client's own default never applies.
    const remainingMs = Math.max(1, this.options.deadlineAt - Date.now());
    const ownMs = target.tool.timeoutMs ?? target.service.timeoutMs;
    const timeoutMs = ownMs === undefined ? remainingMs : Math.min(ownMs, remainingMs);
    const span = tracer.startSpan('agent.tool', { attributes: { 'agent.tool': name } }, trace.setSpan(context.active(), this.options.span));
    const log = this.options.log.child({ agentTool: name });
    try {
      log.debug({ args: Object.keys(args) }, 'agent tool call');
      for await (const text of this.options.fleet.call(target, args, {
        signal: AbortSignal.any([this.options.signal, signal]),
        user: this.options.user,
        timeoutMs,
        hops: this.options.hops + 1,
      })) {
        yield { type: 'text', message: { text }, meta: null };
      }
    } catch (err) {
      // The tool's own error answer is an observation the model can act on, as Dify's agent
      // shows a failed tool; not reaching the tool (timeout, cancellation) ends the call.
      if (!(err instanceof ToolResponseError)) throw err;
      log.info({ errorType: err.type, detail: err.message }, 'agent tool answered an error');
      yield { type: 'text', message: { text: `tool invoke error: ${err.message}` }, meta: null };
    } finally {
      span.end();
    }
  }

  private refusal(service: ToolService): string | undefined {
    // An agent calling an agent (itself included) holds a worker slot while waiting for another: enough of them deadlock the fleet.
    if (service.plugin?.kind === DIFY_AGENT_KIND) return `${service.id} is a dify-agent service; an agent may not call an agent`;
    // Indirectly it can (a tool leading back to the fleet): the hop count bounds how deep.
    if (this.options.hops + 1 > MAX_HOPS)
      return `hop-limit: this agent call is nested in ${this.options.hops} agent calls; a tool call from it would pass the limit of ${MAX_HOPS} (an agent reached the fleet again through its tools)`;
    if (this.toolCalls >= this.options.maximumToolCalls)
      return `maximum_tool_calls (${this.options.maximumToolCalls}) reached: no more tool calls for this agent call`;
    return undefined;
  }
}
