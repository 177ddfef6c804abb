import { Catalog } from '../catalog/catalog.js';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { ConfigEntry } from '../config/config-store.js';
import { ConfigError } from '../errors.js';
import { hasPlugin, type Plugin, type PluginContext } from '../plugins/plugin.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { ExecPolicy } from '../policy/exec-policy.js';
import { readServices, readTools } from './read-descriptors.js';

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
function sameService(previous: Catalog | undefined, service: ToolService): boolean {
  const before = previous?.services.get(service.id);
  return before !== undefined && JSON.stringify(before.raw) === JSON.stringify(service.raw);
}

/** The same descriptors, by what was written: nothing the check looks at has moved. */
function unchanged(previous: Catalog | undefined, service: ToolService, tools: readonly Tool[]): boolean {
  if (!previous || !sameService(previous, service)) return false;
  const text = (list: readonly Tool[]) => JSON.stringify([...list].sort((left, right) => (left.name < right.name ? -1 : 1)).map((tool) => tool.raw));
  return text(previous.toolsOf(service.id)) === text(tools);
}

/**
 * Validate every descriptor against the schemas, against each other and against the
 * plugins, and build the catalog. All problems are collected; each names file and field.
 */
export async function buildCatalog(entries: readonly ConfigEntry[], registry: PluginRegistry, ctx: PluginContext, options: BuildOptions): Promise<Catalog> {
  const problems: string[] = [];
  const services = readServices(entries, registry, options.portable ? undefined : options.policy, problems);
  const tools = readTools(entries, services, registry, problems);
  if (problems.length === 0 && !options.portable) {
    const toolsOf = (service: ToolService) => tools.filter((tool) => tool.service === service.id);
    const ruled: PluginContext = { ...ctx, policy: options.policy };
    // Every service's executions are ruled on before any check runs: a change the policy
    // refuses starts and imports nothing, not even for the services it allows.
    for (const s of services) problems.push(...(await refusals(s, toolsOf(s), registry, ruled, options.policy)));
    for (const s of problems.length === 0 ? services : []) {
      if (!unchanged(options.previous, s, toolsOf(s)))
        problems.push(...(await check(s, toolsOf(s), registry, ruled, sameService(options.previous, s) ? options.running?.(s.id) : undefined)));
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return new Catalog(services, tools);
}

/** What the exec policy refuses of what a service would execute and reach. */
async function refusals(service: ToolService, tools: readonly Tool[], registry: PluginRegistry, ctx: PluginContext, policy: ExecPolicy): Promise<string[]> {
  if (!hasPlugin(service)) return [];
  const factory = await registry.load(service.plugin.kind);
  const found: string[] = [];
  for (const execution of (await factory?.executes?.(service, tools, ctx)) ?? []) {
    const refused = policy.refuse(execution);
    if (refused) found.push(refused);
  }
  for (const reach of factory?.reaches?.(service) ?? []) {
    const refused = policy.refuseReach(reach);
    if (refused) found.push(refused);
  }
  return found;
}

/** The load-time check of the service's plugin kind, if it has one. */
async function check(
  service: ToolService,
  tools: readonly Tool[],
  registry: PluginRegistry,
  ctx: PluginContext,
  running: Plugin | undefined,
): Promise<string[]> {
  if (!hasPlugin(service)) return [];
  const factory = await registry.load(service.plugin.kind);
  return factory?.check ? factory.check(service, tools, ctx, running) : [];
}
