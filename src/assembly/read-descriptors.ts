import type { z } from 'zod';
import { missingRuntimeParameters } from '../arguments/prepare-arguments.js';
import { ARGUMENTS_FROM_MODULE, ConfigType, defaultSubscription, toolSchema, toolServiceSchema, type Tool, type ToolService } from '../catalog/descriptors.js';
import type { ConfigEntry } from '../config/config-store.js';
import { ownValue } from '../plain-object.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { ExecPolicy } from '../policy/exec-policy.js';
import { parseTopic } from '../transport/topic-name.js';

/** A zod error as problems, each naming the file and the field. */
function issues(source: string, prefix: string, error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : String(segment)))]
      .filter(Boolean)
      .join('.')
      .replace(/\.\[/g, '[');
    return `${source}: ${path || '(root)'}: ${issue.message}`;
  });
}

function topic(source: string, field: string, value: string, problems: string[]): string {
  const t = parseTopic(value);
  if ('error' in t) {
    problems.push(`${source}: ${field}: ${t.error}`);
    return value;
  }
  return t.full;
}

/** What `policy` refuses of where a service binds the worker: its topics' namespaces and its subscription. */
function bindingRefusals(service: ToolService, written: { readonly 'request-queue': string; readonly 'response-queue': string }, policy: ExecPolicy): string[] {
  const found: string[] = [];
  for (const [role, field] of [
    ['request', 'request-queue'],
    ['response', 'response-queue'],
  ] as const) {
    const t = parseTopic(written[field]);
    // A malformed topic is a problem already.
    const refused = 'error' in t ? undefined : policy.refuseTopic(`${service.source}: ${field}`, role, t.full, `${t.tenant}/${t.namespace}`);
    if (refused) found.push(refused);
  }
  const refused = policy.refuseSubscription(`${service.source}: subscription`, service.subscription, defaultSubscription(service.id));
  if (refused) found.push(refused);
  return found;
}

/**
 * The tool-service descriptors, validated against their schema, against the plugin kind
 * each names (known here, allowed by `policy`, its options parsed by the kind's own schema),
 * against where `policy` lets them bind the worker, and against each other's subscriptions.
 * Problems are added to `problems`; a service that has some may still be returned.
 */
export function readServices(
  entries: readonly ConfigEntry[],
  registry: PluginRegistry,
  policy: ExecPolicy | undefined,
  problems: string[],
  known?: (entry: ConfigEntry) => ToolService | undefined,
  read?: Map<string, ToolService>,
): ToolService[] {
  const services: ToolService[] = [];
  const ids = new Set<string>();
  // Each request topic and subscription, by the service consuming it: two on one would each take part of the other's requests.
  const consumers = new Map<string, ToolService>();
  for (const e of entries) {
    if (e.type !== ConfigType.ToolService) continue;
    if (e.error) {
      problems.push(`${e.source}: ${e.error}`);
      continue;
    }
    // What one descriptor alone decides is read again only when it changed; the checks
    // against the others below run on every build, over ids and topics only.
    const service = known?.(e) ?? serviceOf(e, registry, policy, problems);
    if (!service) continue;
    read?.set(e.source, service);
    const duplicate = ids.has(service.id);
    if (duplicate) problems.push(`${e.source}: id: duplicate tool-service id "${service.id}"`);
    ids.add(service.id);
    const binding = `${service.requestQueue}\u0000${service.subscription}`;
    const twin = consumers.get(binding);
    if (twin && !duplicate) {
      problems.push(
        `${e.source}: subscription: service "${service.id}" would consume ${service.requestQueue} as ${JSON.stringify(service.subscription)}, as service "${twin.id}" (${twin.source}) does: each would take part of the other's requests`,
      );
    }
    if (!twin) consumers.set(binding, service);
    services.push(service);
  }
  return services;
}

/** One tool-service descriptor read on its own: its schema, plugin, topics and where `policy` lets it bind. */
function serviceOf(e: ConfigEntry, registry: PluginRegistry, policy: ExecPolicy | undefined, problems: string[]): ToolService | undefined {
  const parsed = toolServiceSchema.safeParse(e.value);
  if (!parsed.success) {
    problems.push(...issues(e.source, '', parsed.error));
    return undefined;
  }
  const declared = parsed.data;
  const plugin = declared.plugin ? pluginOf(e.source, declared.plugin, registry, policy, problems) : undefined;
  const service: ToolService = {
    id: declared.id,
    requestQueue: topic(e.source, 'request-queue', declared['request-queue'], problems),
    responseQueue: topic(e.source, 'response-queue', declared['response-queue'], problems),
    configParams: declared['config-params'],
    plugin,
    concurrency: declared.concurrency,
    timeoutMs: declared['timeout-ms'],
    stream: declared.stream,
    subscription: declared.subscription ?? defaultSubscription(declared.id),
    maxRedeliveries: declared['max-redeliveries'],
    raw: e.value as Record<string, unknown>,
    source: e.source,
  };
  if (policy) problems.push(...bindingRefusals(service, declared, policy));
  return service;
}

/** A service's `plugin` object, its options parsed by its kind; undefined (and a problem) when that cannot be. */
function pluginOf(
  source: string,
  written: { kind: string },
  registry: PluginRegistry,
  policy: ExecPolicy | undefined,
  problems: string[],
): ToolService['plugin'] {
  const { kind, ...rest } = written;
  const factory = registry.schemas(kind);
  const refused = policy?.refusePlugin(kind);
  if (!factory) {
    problems.push(`${source}: plugin.kind: unknown plugin "${kind}" (available: ${registry.kinds().join(', ')})`);
  } else if (refused) {
    problems.push(`${source}: plugin.kind: ${refused}`);
  } else {
    const options = factory.serviceOptions.safeParse(rest);
    if (options.success) return { kind, options: options.data };
    problems.push(...issues(source, 'plugin', options.error));
  }
  return undefined;
}

/** A tool as a build before read it, and the service it was read against. */
export interface KnownTool {
  readonly tool: Tool;
  readonly service: ToolService;
  /** What tells it from the service's other tools. */
  readonly configKey: string;
}

/**
 * The tool descriptors of the kind toolwire serves, validated against their schema, their
 * service (its config values, told apart from its other tools'), their hidden parameters and
 * their service's plugin kind (`plugin-options`). Problems are added to `problems`.
 */
export function readTools(
  entries: readonly ConfigEntry[],
  services: readonly ToolService[],
  registry: PluginRegistry,
  problems: string[],
  known?: (entry: ConfigEntry) => KnownTool | undefined,
  read?: Map<string, KnownTool>,
): Tool[] {
  const byId = new Map<string, ToolService>();
  for (const s of services) if (!byId.has(s.id)) byId.set(s.id, s);
  const names = new Map<string, string>();
  const seenConfig = new Map<string, string>();
  const tools: Tool[] = [];
  for (const e of entries) {
    if (e.type !== ConfigType.Tool) continue;
    if (e.error) {
      problems.push(`${e.source}: ${e.error}`);
      continue;
    }
    // A tool read before against the very service it names now: only its place among the others is checked again.
    const before = known?.(e);
    if (before && byId.get(before.tool.service) === before.service) {
      const prior = names.get(before.tool.name);
      if (prior) problems.push(`${e.source}: name: duplicate tool name "${before.tool.name}" (also in ${prior})`);
      names.set(before.tool.name, e.source);
      distinctConfig(e.source, before.configKey, before.service, seenConfig, problems);
      tools.push(before.tool);
      read?.set(e.source, before);
      continue;
    }
    const parsed = toolSchema.safeParse(e.value);
    if (!parsed.success) {
      problems.push(...issues(e.source, '', parsed.error));
      continue;
    }
    const declared = parsed.data;
    if (declared.type !== 'tool-service') continue; // other TrustGraph tool kinds (mcp-tool, prompt...) are not ours
    const prior = names.get(declared.name);
    if (prior) problems.push(`${e.source}: name: duplicate tool name "${declared.name}" (also in ${prior})`);
    names.set(declared.name, e.source);

    const service = byId.get(declared.service);
    if (!service) {
      problems.push(`${e.source}: service: unknown tool-service "${declared.service}" (known: ${[...byId.keys()].join(', ') || 'none'})`);
      continue;
    }
    const raw = e.value as Record<string, unknown>;
    const config = configValues(e.source, raw, service, problems);
    const configKey = configKeyOf(service, config);
    distinctConfig(e.source, configKey, service, seenConfig, problems);
    // From the module: none until its plugin derives them (buildCatalog).
    const parameters = declared.arguments === ARGUMENTS_FROM_MODULE ? [] : declared.arguments;
    // A config value can also fill a declared hidden parameter of the same name.
    const runtime: Record<string, unknown> = {};
    for (const p of parameters) if (p.form !== 'llm' && config[p.name] !== undefined) runtime[p.name] = config[p.name];
    Object.assign(runtime, declared['runtime-parameters']);
    const missing = missingRuntimeParameters(parameters, runtime);
    if (missing.length > 0) {
      problems.push(`${e.source}: runtime-parameters: Tool '${declared.name}' requires non-LLM runtime_parameters for: ${missing.join(', ')}.`);
    }
    tools.push({
      name: declared.name,
      description: declared.description,
      service: declared.service,
      config,
      parameters,
      ...(declared.arguments === ARGUMENTS_FROM_MODULE ? { argumentsFromModule: true as const } : {}),
      runtimeParameters: runtime,
      pluginOptions: toolPluginOptions(e.source, declared['plugin-options'], service, registry, problems),
      timeoutMs: declared['timeout-ms'],
      raw,
      source: e.source,
    });
    read?.set(e.source, { tool: tools[tools.length - 1]!, service, configKey });
  }
  return tools;
}

/**
 * A tool's values for its service's config-params, which must be there when required. */
function configValues(source: string, raw: Record<string, unknown>, service: ToolService, problems: string[]): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const p of service.configParams) {
    const value = ownValue(raw, p.name);
    if (value !== undefined) config[p.name] = value;
    else if (p.required) problems.push(`${source}: ${p.name}: required by the config-params of service ${service.id}, but missing`);
  }
  return config;
}

/** What tells a tool from its service's others: its values for the service's config-params, in their order. */
function configKeyOf(service: ToolService, config: Readonly<Record<string, unknown>>): string {
  return `${service.id}\u0000${JSON.stringify(service.configParams.map((param) => config[param.name] ?? null))}`;
}

/** A tool's config values must tell it apart from its service's other tools (`seen`: the sources by values so far). */
function distinctConfig(source: string, key: string, service: ToolService, seen: Map<string, string>, problems: string[]): void {
  const twin = seen.get(key);
  if (twin)
    problems.push(
      `${source}: ${service.configParams.length ? service.configParams.map((param) => param.name).join(', ') : 'service'}: same config values as ${twin}; service ${service.id} could not tell their requests apart`,
    );
  seen.set(key, source);
}

/** `plugin-options` parsed by the service's kind when it has tool options (absent ones as `{}`), else as written. */
function toolPluginOptions(
  source: string,
  written: Record<string, unknown> | undefined,
  service: ToolService,
  registry: PluginRegistry,
  problems: string[],
): unknown {
  const factory = service.plugin ? registry.schemas(service.plugin.kind) : undefined;
  if (!factory?.toolOptions) return written;
  const o = factory.toolOptions.safeParse(written ?? {});
  if (o.success) return o.data;
  problems.push(...issues(source, 'plugin-options', o.error));
  return written;
}
