import { Catalog } from '../catalog/catalog.js';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { ConfigEntry } from '../config/config-store.js';
import { ConfigError } from '../errors.js';
import { hasPlugin, type Plugin, type PluginContext } from '../plugins/plugin.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { ExecPolicy } from '../policy/exec-policy.js';
import { withModuleArguments } from './module-arguments.js';
import { readServices, readTools, type KnownTool } from './read-descriptors.js';

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

/**
 * What a worker's build read each descriptor into, by where the descriptor came from (its
 * file, its TrustGraph key), so that the next build against this catalog reads again only
 * what changed.
 */
interface Readings {
  readonly policy: ExecPolicy | undefined;
  readonly registry: PluginRegistry;
  readonly services: Map<string, ToolService>;
  readonly tools: Map<string, KnownTool>;
}

const readings = new WeakMap<Catalog, Readings>();

/**
 * The reading of `e` when it is written as it was. A source hands back the very value for an
 * item unchanged (directory-store.ts, trustgraph-store.ts): that is the cheap case; a value
 * made anew is compared by its JSON.
 */
function found<T extends ToolService | KnownTool>(reading: T | undefined, e: ConfigEntry): T | undefined {
  if (!reading) return undefined;
  const raw = 'tool' in reading ? reading.tool.raw : reading.raw;
  return raw === e.value || JSON.stringify(raw) === JSON.stringify(e.value) ? reading : undefined;
}

/** The same service descriptor, by what was written: the plugin serving it now serves this one. */
function sameService(previous: Catalog | undefined, service: ToolService): boolean {
  const before = previous?.services.get(service.id);
  return before !== undefined && (before === service || JSON.stringify(before.raw) === JSON.stringify(service.raw));
}

/** The same descriptors (the very ones, else by what was written): nothing the check looks at has moved. */
function unchanged(previous: Catalog | undefined, service: ToolService, tools: readonly Tool[]): boolean {
  if (!previous || !sameService(previous, service)) return false;
  const before = previous.toolsOf(service.id);
  if (previous.services.get(service.id) === service && before.length === tools.length) {
    const kept = new Set(before);
    if (tools.every((tool) => kept.has(tool))) return true;
  }
  const text = (list: readonly Tool[]) => JSON.stringify([...list].sort((left, right) => (left.name < right.name ? -1 : 1)).map((tool) => tool.raw));
  return text(before) === text(tools);
}

/**
 * Validate every descriptor against the schemas, against each other and against the
 * plugins, and build the catalog. All problems are collected; each names file and field.
 *
 * A worker's build against the catalog served (`previous`) reads again only the descriptors
 * that changed, and rules on and checks only the services whose descriptor or tools did:
 * the others keep their very objects, which tells the worker's reload they are unchanged.
 * What holds between descriptors (ids, names, topics, config values) is checked whole every
 * time, over those small keys.
 */
export async function buildCatalog(entries: readonly ConfigEntry[], registry: PluginRegistry, ctx: PluginContext, options: BuildOptions): Promise<Catalog> {
  const problems: string[] = [];
  const policy = options.portable ? undefined : options.policy;
  const before = options.portable || !options.previous ? undefined : readings.get(options.previous);
  const known = before?.policy === policy && before?.registry === registry ? before : undefined;
  const read: Readings = { policy, registry, services: new Map(), tools: new Map() };
  const services = readServices(entries, registry, policy, problems, known && ((e) => found(known.services.get(e.source), e)), read.services);
  let tools = readTools(entries, services, registry, problems, known && ((e) => found(known.tools.get(e.source), e)), read.tools);
  if (problems.length === 0 && !options.portable) {
    const grouped = new Map<string, Tool[]>();
    for (const t of tools) {
      const list = grouped.get(t.service);
      if (list) list.push(t);
      else grouped.set(t.service, [t]);
    }
    const toolsOf = (service: ToolService): readonly Tool[] => grouped.get(service.id) ?? [];
    const changed = services.filter((s) => !unchanged(options.previous, s, toolsOf(s)));
    const ruled: PluginContext = { ...ctx, policy: options.policy };
    // Every changed service's executions are ruled on before any check runs: a change the
    // policy refuses starts and imports nothing, not even for the services it allows. An
    // unchanged one was ruled on by the same policy when it came.
    for (const s of changed) problems.push(...(await refusals(s, toolsOf(s), registry, ruled, options.policy)));
    for (const s of problems.length === 0 ? changed : []) {
      problems.push(...(await check(s, toolsOf(s), registry, ruled, sameService(options.previous, s) ? options.running?.(s.id) : undefined)));
    }
    if (problems.length === 0) tools = await withModuleArguments(tools, changed, options.previous, registry, ruled, problems);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const catalog = new Catalog(services, tools);
  if (policy) readings.set(catalog, read);
  return catalog;
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
