import { z } from 'zod';
import { SLIM_KEYS, slimDescriptorRefusal } from './slim-refusal.js';

export const DIFY_AGENT_KIND = 'dify-agent';

/**
 * Which strategy runs and how (the service's `plugin: {kind: dify-agent, ...}`; a tool's
 * `plugin-options` override it key by key). The model endpoint and keys are worker settings.
 * Unknown keys are refused; those that ask for slim (`runtime`, `slim_mode`) with the reason.
 */
export const difyAgentOptionsSchema = z.strictObject(
  {
    /** `org/plugin` of the strategy plugin (X-Plugin-ID), e.g. `langgenius/agent`. */
    plugin_id: z
      .string()
      .regex(/^[^/\s]+\/[^/\s]+$/, 'plugin_id must be "org/plugin"')
      .optional(),
    /** The strategy provider, `org/plugin/provider` or its last segment (e.g. `agent`). */
    provider: z.string().min(1).optional(),
    /** The strategy's name in the provider (`function_calling`, `ReAct`). */
    strategy: z.string().min(1).optional(),
    /**
     * The model's name at the OpenAI-compatible endpoint. With TrustGraph text-completion the
     * flow chooses the model: this is then only its label (in metrics and what the strategy sees).
     */
    model: z.string().min(1).optional(),
    /** Sampling parameters passed to the endpoint (temperature, top_p, max_tokens, seed...). */
    model_parameters: z.record(z.string(), z.unknown()).optional(),
    /** Catalog tools the strategy may call, by tool name. */
    tools: z.array(z.string().min(1)).optional(),
    /** The system prompt: fixed by the descriptor, so the model's prefix cache holds across calls. */
    instruction: z.string().optional(),
    maximum_iterations: z.number().int().min(1).max(500).optional(),
    /** Tool calls one agent call may make in all (default: 5 per model round, maximum_iterations × 5). */
    maximum_tool_calls: z.number().int().min(0).max(5000).optional(),
    /** What the calling agent may set besides `query`. */
    agent_may_set: z.array(z.enum(['instruction', 'context'])).optional(),
    /** Put the strategy's log (thought, action, observation) into a streamed answer too. */
    stream_log: z.boolean().optional(),
    /** Further strategy parameters, passed as given. */
    params: z.record(z.string(), z.unknown()).optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' && issue.keys.some((key) => SLIM_KEYS.has(key)) ? slimDescriptorRefusal(issue.keys) : undefined) },
);
export type DifyAgentOptions = z.output<typeof difyAgentOptionsSchema>;

/** The default bound on tool calls per model round (a multi-tool-call round asks for several). */
export const TOOL_CALLS_PER_ROUND = 5;

/** A tool's options over its service's, with the required ones checked. */
export interface AgentTarget {
  readonly pluginId: string;
  readonly provider: string;
  readonly strategy: string;
  readonly model: string;
  readonly modelParameters: Readonly<Record<string, unknown>>;
  readonly tools: readonly string[];
  readonly instruction: string;
  readonly maximumIterations: number;
  readonly maximumToolCalls: number;
  readonly agentMaySet: ReadonlySet<'instruction' | 'context'>;
  readonly streamLog: boolean;
  readonly params: Readonly<Record<string, unknown>>;
}

/** The model's label when the descriptor names none and the worker's model is TrustGraph's (the flow picks it). */
export const FLOW_MODEL_LABEL = 'text-completion';

/** `modelRequired`: false where the worker's model is TrustGraph text-completion, whose flow names the model. */
export function agentTarget(
  service: unknown,
  tool: unknown,
  { modelRequired = true }: { readonly modelRequired?: boolean } = {},
): { target?: AgentTarget; problems: string[] } {
  const serviceOptions = difyAgentOptionsSchema.safeParse(service ?? {});
  const toolOptions = difyAgentOptionsSchema.safeParse(tool ?? {});
  const problems = [
    ...(serviceOptions.success ? [] : serviceOptions.error.issues.map((issue) => `plugin: ${issue.path.join('.')}: ${issue.message}`)),
    ...(toolOptions.success ? [] : toolOptions.error.issues.map((issue) => `plugin-options: ${issue.path.join('.')}: ${issue.message}`)),
  ];
  if (!serviceOptions.success || !toolOptions.success) return { problems };
  const merged = { ...serviceOptions.data, ...toolOptions.data };
  const { plugin_id: pluginId, provider, strategy } = merged;
  const model = merged.model ?? (modelRequired ? undefined : FLOW_MODEL_LABEL);
  for (const [key, v] of [
    ['plugin_id', pluginId],
    ['provider', provider],
    ['strategy', strategy],
    ['model', model],
  ] as const) {
    if (!v) problems.push(`${key} is required (on the service's plugin or the tool's plugin-options)`);
  }
  if (!pluginId || !provider || !strategy || !model) return { problems };
  return {
    problems,
    target: {
      pluginId,
      // The SDK knows a provider by its own name, the last segment of org/plugin/provider.
      provider: provider.slice(provider.lastIndexOf('/') + 1),
      strategy,
      model,
      modelParameters: merged.model_parameters ?? {},
      tools: merged.tools ?? [],
      instruction: merged.instruction ?? '',
      maximumIterations: merged.maximum_iterations ?? 3,
      maximumToolCalls: merged.maximum_tool_calls ?? (merged.maximum_iterations ?? 3) * TOOL_CALLS_PER_ROUND,
      agentMaySet: new Set(merged.agent_may_set ?? []),
      streamLog: merged.stream_log ?? false,
      params: merged.params ?? {},
    },
  };
}

/** An agent's options, on its service and on each of its tools (which win). */
export const difyAgentSchemas = { kind: DIFY_AGENT_KIND, serviceOptions: difyAgentOptionsSchema, toolOptions: difyAgentOptionsSchema } as const;
