import { context, trace } from '@opentelemetry/api';
import type { Tool, ToolService } from '../../catalog/descriptors.js';
import { ConfigError, InvalidArgumentsError, ToolFailedError } from '../../errors.js';
import { DifyDaemonClient } from '../dify-common/daemon-client.js';
import { observe } from '../dify-common/observe-stream.js';
import type { Fleet, Plugin, PluginContext, PluginEvents, PluginFactory, ToolCall } from '../plugin.js';
import { agentTarget, difyAgentSchemas, DIFY_AGENT_KIND, type AgentTarget, type DifyAgentOptions } from './agent-options.js';
import { CallScope } from './agent-call-scope.js';
import { acquireInnerApi, type InnerApiLease } from './inner-api-host.js';
import type { AgentModel } from './agent-model.js';
import { OpenAiChatModel } from './openai-chat-model.js';
import { AgentModelKind, readDifyAgentSettings, type AgentModelSettings, type DifyAgentSettings } from './settings.js';
import { TextCompletionModel } from './text-completion-model.js';
import { routeStrategyMessages } from './strategy-stream.js';
import { toolEntity } from './tool-entities.js';
import { userTurn } from './user-turn.js';

const tracer = trace.getTracer('toolwire');

/**
 * Strategies known to send tool definitions to the model (native function calling):
 * langgenius/agent's `function_calling` and ours of that name. A text-only model refuses them
 * at validation; any other strategy that sends tools is refused at its first model round.
 */
const NATIVE_TOOL_CALLING_STRATEGIES = new Set(['function_calling']);

/** What the strategy is told of the model: a text-only one has no tool-call features. */
const MODEL_FACE: Readonly<Record<AgentModelKind, { provider: string; features: readonly string[] }>> = {
  [AgentModelKind.OpenAi]: { provider: 'toolwire/openai_api_compatible/openai_api_compatible', features: ['tool-call', 'multi-tool-call', 'stream-tool-call'] },
  [AgentModelKind.TextCompletion]: { provider: 'toolwire/trustgraph/text_completion', features: [] },
};

/** The model-selector value a strategy reads (dify_plugin AgentModelConfig). */
function modelSelector(target: AgentTarget, kind: AgentModelKind): Record<string, unknown> {
  const face = MODEL_FACE[kind];
  return {
    provider: face.provider,
    model: target.model,
    model_type: 'llm',
    mode: 'chat',
    completion_params: { ...target.modelParameters },
    type: 'model-selector',
    history_prompt_messages: [],
    // langgenius/agent streams tool calls only when the model says it can.
    entity: {
      model: target.model,
      label: { en_US: target.model },
      model_type: 'llm',
      features: [...face.features],
      fetch_from: 'customizable-model',
      model_properties: { mode: 'chat' },
      parameter_rules: [],
    },
  };
}

/**
 * Runs a Dify agent strategy (langgenius/agent's function_calling or ReAct, or any strategy
 * plugin) on toolwire's own plugin daemon, and answers the strategy's model and tool calls
 * itself: the model on an OpenAI-compatible endpoint or TrustGraph's text-completion service,
 * the tools on the fleet.
 */
export class DifyAgentPlugin implements Plugin {
  readonly kind = DIFY_AGENT_KIND;
  private readonly client: DifyDaemonClient;
  /** Aborted by close(): a plugin closed on reload ends its calls' model and tool rounds. */
  private readonly closing = new AbortController();

  constructor(
    private readonly service: ToolService,
    private readonly settings: DifyAgentSettings,
    private readonly inner: InnerApiLease,
    private readonly model: AgentModel,
    private readonly fleet: Fleet,
    private readonly events?: PluginEvents,
  ) {
    this.client = new DifyDaemonClient(settings.daemon);
  }

  async *invoke(call: ToolCall): AsyncGenerator<string> {
    const deadlineAt = Date.now() + call.timeoutMs;
    const { target, problems } = agentTarget(this.service.plugin?.options, call.tool?.pluginOptions, {
      modelRequired: this.settings.model.kind === AgentModelKind.OpenAi,
    });
    if (!target) throw new ToolFailedError(`the agent is misconfigured: ${problems.join('; ')}`);
    const { query, instruction, ctx, tools } = this.inputs(call, target);

    const span = tracer.startSpan(
      `dify-agent ${target.strategy}`,
      { attributes: { 'agent.strategy': `${target.pluginId}/${target.provider}/${target.strategy}`, 'toolwire.request_id': call.requestId } },
      context.active(),
    );
    const stop = new AbortController();
    const signal = AbortSignal.any([call.signal, stop.signal, this.closing.signal]);
    const scope = new CallScope({
      model: this.model,
      modelName: target.model,
      modelParameters: target.modelParameters,
      fleet: this.fleet,
      tools: new Set(target.tools),
      maximumIterations: target.maximumIterations,
      maximumToolCalls: target.maximumToolCalls,
      deadlineAt,
      signal,
      user: call.user,
      hops: call.hops ?? 0,
      log: call.log,
      span,
      events: this.events,
    });
    const unregister = this.inner.server.register(scope);
    try {
      const payload = {
        user_id: scope.token,
        conversation_id: null,
        app_id: null,
        message_id: null,
        context: { credentials: { tool_credentials: {} } },
        data: {
          agent_strategy_provider: target.provider,
          agent_strategy: target.strategy,
          agent_strategy_params: {
            ...target.params,
            model: modelSelector(target, this.settings.model.kind),
            tools: tools.map(toolEntity),
            instruction,
            // Context goes in the user turn: the system prompt (instruction and tools) stays
            // the same bytes on every call, so the endpoint's prefix cache keeps hitting.
            query: userTurn(query, ctx),
            context: null,
            maximum_iterations: target.maximumIterations,
          },
        },
      };
      const items = this.client.dispatch('agent_strategy/invoke', target.pluginId, payload, signal);
      yield* observe(routeStrategyMessages(items, { log: call.log, span, logToAnswer: call.stream && target.streamLog }), {
        log: call.log,
        blobSink: this.settings.blobSink,
        signal,
        toolName: call.tool?.name ?? this.service.id,
        secrets: [
          this.settings.daemon.key,
          this.settings.innerApi.key,
          ...(this.settings.model.kind === AgentModelKind.OpenAi && this.settings.model.key ? [this.settings.model.key] : []),
        ],
      });
      call.log.info({ modelRounds: scope.modelRounds, toolCalls: scope.toolCalls }, 'agent call done');
    } finally {
      // Whatever ended the call, nothing it started may go on.
      stop.abort();
      unregister();
      span.end();
    }
  }

  /** What the calling agent gave (query; instruction and context where the descriptor lets it), and the catalog tools the strategy gets. */
  private inputs(call: ToolCall, target: AgentTarget): { query: string; instruction: string; ctx: unknown; tools: Tool[] } {
    const query = call.arguments['query'];
    if (typeof query !== 'string' || query.trim() === '') throw new InvalidArgumentsError('argument "query" is required: what the agent should do');
    const instruction =
      target.agentMaySet.has('instruction') && typeof call.arguments['instruction'] === 'string' ? call.arguments['instruction'] : target.instruction;
    const ctx = target.agentMaySet.has('context') ? call.arguments['context'] : undefined;
    const tools = target.tools.map((name) => {
      const known = this.fleet.tool(name);
      if (!known) throw new ToolFailedError(`the agent's tool ${name} is not in the catalog`);
      return known.tool;
    });
    return { query, instruction, ctx, tools };
  }

  async close(): Promise<void> {
    // Calls first, then the listener that serves their rounds, then the model's connections.
    this.closing.abort();
    await this.inner.release();
    await this.model.close();
  }
}

function textOnlyRefusal(strategy: string): string {
  return `${strategy} calls tools natively (function calling), and this worker's model is TrustGraph text-completion (DIFY_AGENT_MODEL=text-completion), which takes text only: use a text-only strategy such as ReAct, or DIFY_AGENT_MODEL=openai`;
}

function agentModel(modelSettings: AgentModelSettings, fleet: Fleet): AgentModel {
  return modelSettings.kind === AgentModelKind.TextCompletion
    ? new TextCompletionModel(fleet, { request: modelSettings.request, response: modelSettings.response })
    : new OpenAiChatModel(modelSettings);
}

function settingsOrThrow(ctx: PluginContext): DifyAgentSettings {
  const { settings, problems } = readDifyAgentSettings(ctx.settings, ctx.secrets);
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}

export const difyAgentPluginFactory: PluginFactory<DifyAgentOptions, DifyAgentOptions> = {
  ...difyAgentSchemas,
  async check(service: ToolService, tools: readonly Tool[], ctx: PluginContext): Promise<string[]> {
    const { settings, problems } = readDifyAgentSettings(ctx.settings, ctx.secrets);
    const out = problems.map((problem) => `${service.source}: plugin: ${problem}`);
    const modelRequired = settings.model.kind === AgentModelKind.OpenAi;
    const own = new Set(tools.map((tool) => tool.name));
    const checkTarget = (source: string, target: AgentTarget | undefined): void => {
      if (target && !modelRequired && NATIVE_TOOL_CALLING_STRATEGIES.has(target.strategy)) out.push(`${source}: strategy: ${textOnlyRefusal(target.strategy)}`);
    };
    for (const t of tools) {
      const { target, problems } = agentTarget(service.plugin?.options, t.pluginOptions, { modelRequired });
      out.push(...problems.map((problem) => `${t.source}: ${problem}`));
      checkTarget(t.source, target);
      // The other services' kinds are not visible here; the call scope refuses those at call time.
      for (const name of target?.tools ?? [])
        if (own.has(name)) out.push(`${t.source}: tools: ${name} is a tool of this dify-agent service; an agent may not call an agent`);
    }
    // A service without tool descriptors answers with its own options alone.
    if (tools.length === 0) {
      const { target, problems } = agentTarget(service.plugin?.options, undefined, { modelRequired });
      out.push(...problems.map((problem) => `${service.source}: ${problem}`));
      checkTarget(service.source, target);
    }
    return out;
  },
  async create(service: ToolService, ctx: PluginContext): Promise<Plugin> {
    const settings = settingsOrThrow(ctx);
    if (!ctx.fleet) throw new ConfigError([`${service.source}: the dify-agent plugin needs the fleet (a worker with a broker)`]);
    const inner = await acquireInnerApi({ ...settings.innerApi, log: ctx.log.child({ component: 'dify-inner-api' }) });
    return new DifyAgentPlugin(service, settings, inner, agentModel(settings.model, ctx.fleet), ctx.fleet, ctx.events);
  },
};
