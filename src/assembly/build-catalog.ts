import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { Plugin, PluginContext } from '../plugins/plugin.js';
import type { PluginRegistry } from '../plugins/registry.js';
import { missingRuntimeParameters } from '../arguments/prepare-arguments.js';
import { ownValue } from '../plain-object.js';
import { parseTopic } from '../transport/topic-name.js';
import type { ExecPolicy } from '../policy/exec-policy.js';
import { Catalog } from '../catalog/catalog.js';
import type { ConfigEntry } from '../config/config-store.js';
import { ConfigType, toolSchema, toolServiceSchema, type Tool, type ToolService } from '../catalog/descriptors.js';

function issues(source: string, prefix: string, error: z.ZodError): string[] {
  return error.issues.map((i) => {
    const path = [prefix, ...i.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))]
      .filter(Boolean)
      .join('.')
      .replace(/\.\[/g, '[');
    return `${source}: ${path || '(root)'}: ${i.message}`;
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

/**
 * Either a worker's build, which puts what descriptors would execute to its exec policy and
 * then runs the plugins' load-time checks; or a portable one, which does neither: an
 * operator's machine checking a fleet's shared config has none of the workers' own (a module
 * file, a secret, a binary), and executes nothing. Each worker still builds every change itself.
 */
export type BuildOptions =
  | { readonly portable: true }
  | {
      readonly portable?: false;
      readonly policy: ExecPolicy;
      /**
       * The catalog served now. A service whose descriptor and tools are as they were there is
       * not checked again: its check passed, its plugin runs, and an MCP stdio check would
       * start its server once more on every reload.
       */
      readonly previous?: Catalog | undefined;
      /** The plugin serving a service of `previous` now, for a check to ask when only the service's tools changed. */
      readonly running?: ((serviceId: string) => Plugin | undefined) | undefined;
    };

/** The same service descriptor, by what was written: the plugin serving it now serves this one. */
function sameService(previous: Catalog | undefined, s: ToolService): boolean {
  const before = previous?.services.get(s.id);
  return before !== undefined && JSON.stringify(before.raw) === JSON.stringify(s.raw);
}

/** The same descriptors, by what was written: nothing the check looks at has moved. */
function unchanged(previous: Catalog | undefined, s: ToolService, tools: readonly Tool[]): boolean {
  if (!previous || !sameService(previous, s)) return false;
  const text = (list: readonly Tool[]) => JSON.stringify([...list].sort((a, b) => (a.name < b.name ? -1 : 1)).map((t) => t.raw));
  return text(previous.toolsOf(s.id)) === text(tools);
}

/**
 * Validate every descriptor against the schemas, against each other and against the
 * plugins, and build the catalog. All problems are collected; each names file and field.
 */
export async function buildCatalog(entries: readonly ConfigEntry[], registry: PluginRegistry, ctx: PluginContext, options: BuildOptions): Promise<Catalog> {
  const policy = options.portable ? undefined : options.policy;
  const previous = options.portable ? undefined : options.previous;
  const running = options.portable ? undefined : options.running;
  const problems: string[] = [];
  const services: ToolService[] = [];
  const tools: Tool[] = [];

  for (const e of entries.filter((x) => x.type === ConfigType.ToolService)) {
    if (e.error) {
      problems.push(`${e.source}: ${e.error}`);
      continue;
    }
    const r = toolServiceSchema.safeParse(e.value);
    if (!r.success) {
      problems.push(...issues(e.source, '', r.error));
      continue;
    }
    const d = r.data;
    let plugin: ToolService['plugin'];
    if (d.plugin) {
      const { kind, ...rest } = d.plugin;
      const factory = registry.get(kind);
      const refused = policy?.refusePlugin(kind);
      if (!factory) {
        problems.push(`${e.source}: plugin.kind: unknown plugin "${kind}" (available: ${registry.kinds().join(', ')})`);
      } else if (refused) {
        problems.push(`${e.source}: plugin.kind: ${refused}`);
      } else {
        const o = factory.serviceOptions.safeParse(rest);
        if (o.success) plugin = { kind, options: o.data };
        else problems.push(...issues(e.source, 'plugin', o.error));
      }
    }
    if (services.some((s) => s.id === d.id)) problems.push(`${e.source}: id: duplicate tool-service id "${d.id}"`);
    services.push({
      id: d.id,
      requestQueue: topic(e.source, 'request-queue', d['request-queue'], problems),
      responseQueue: topic(e.source, 'response-queue', d['response-queue'], problems),
      configParams: d['config-params'],
      plugin,
      concurrency: d.concurrency,
      timeoutMs: d['timeout-ms'],
      stream: d.stream,
      subscription: d.subscription ?? `${d.id}-request`,
      maxRedeliveries: d['max-redeliveries'],
      raw: e.value as Record<string, unknown>,
      source: e.source,
    });
  }

  const byId = new Map(services.map((s) => [s.id, s]));
  const names = new Map<string, string>();
  const seenConfig = new Map<string, string>();
  for (const e of entries.filter((x) => x.type === ConfigType.Tool)) {
    if (e.error) {
      problems.push(`${e.source}: ${e.error}`);
      continue;
    }
    const r = toolSchema.safeParse(e.value);
    if (!r.success) {
      problems.push(...issues(e.source, '', r.error));
      continue;
    }
    const d = r.data;
    if (d.type !== 'tool-service') continue; // other TrustGraph tool kinds (mcp-tool, prompt...) are not ours
    const prior = names.get(d.name);
    if (prior) problems.push(`${e.source}: name: duplicate tool name "${d.name}" (also in ${prior})`);
    names.set(d.name, e.source);

    const service = byId.get(d.service);
    if (!service) {
      problems.push(`${e.source}: service: unknown tool-service "${d.service}" (known: ${[...byId.keys()].join(', ') || 'none'})`);
      continue;
    }
    const raw = e.value as Record<string, unknown>;
    const config: Record<string, unknown> = {};
    for (const p of service.configParams) {
      const value = ownValue(raw, p.name);
      if (value !== undefined) config[p.name] = value;
      else if (p.required) problems.push(`${e.source}: ${p.name}: required by the config-params of service ${service.id}, but missing`);
    }
    const key = `${service.id}\u0000${JSON.stringify(service.configParams.map((p) => config[p.name] ?? null))}`;
    const twin = seenConfig.get(key);
    if (twin) problems.push(`${e.source}: ${service.configParams.length ? service.configParams.map((p) => p.name).join(', ') : 'service'}: same config values as ${twin}; service ${service.id} could not tell their requests apart`);
    seenConfig.set(key, e.source);

    // A config value can also fill a declared hidden parameter of the same name.
    const runtime: Record<string, unknown> = {};
    for (const p of d.arguments) if (p.form !== 'llm' && config[p.name] !== undefined) runtime[p.name] = config[p.name];
    Object.assign(runtime, d['runtime-parameters']);
    const missing = missingRuntimeParameters(d.arguments, runtime);
    if (missing.length > 0) {
      problems.push(`${e.source}: runtime-parameters: Tool '${d.name}' requires non-LLM runtime_parameters for: ${missing.join(', ')}.`);
    }

    let pluginOptions: unknown = d['plugin-options'];
    const factory = service.plugin ? registry.get(service.plugin.kind) : undefined;
    if (factory?.toolOptions) {
      const o = factory.toolOptions.safeParse(d['plugin-options'] ?? {});
      if (o.success) pluginOptions = o.data;
      else problems.push(...issues(e.source, 'plugin-options', o.error));
    }
    tools.push({
      name: d.name,
      description: d.description,
      service: d.service,
      config,
      parameters: d.arguments,
      runtimeParameters: runtime,
      pluginOptions,
      timeoutMs: d['timeout-ms'],
      raw,
      source: e.source,
    });
  }

  if (problems.length === 0 && policy) {
    const toolsOf = (s: ToolService) => tools.filter((t) => t.service === s.id);
    const ruled: PluginContext = { ...ctx, policy };
    // Every service's executions are ruled on before any check runs: a change the policy
    // refuses starts and imports nothing, not even for the services it allows.
    for (const s of services) {
      const factory = s.plugin ? registry.get(s.plugin.kind) : undefined;
      const executions = (await factory?.executes?.(s, toolsOf(s), ruled)) ?? [];
      for (const x of executions) {
        const refused = policy.refuse(x);
        if (refused) problems.push(refused);
      }
      for (const r of factory?.reaches?.(s) ?? []) {
        const refused = policy.refuseReach(r);
        if (refused) problems.push(refused);
      }
    }
    for (const s of problems.length === 0 ? services : []) {
      const factory = s.plugin ? registry.get(s.plugin.kind) : undefined;
      if (!factory?.check || unchanged(previous, s, toolsOf(s))) continue;
      problems.push(...(await factory.check(s, toolsOf(s), ruled, sameService(previous, s) ? running?.(s.id) : undefined)));
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return new Catalog(services, tools);
}
