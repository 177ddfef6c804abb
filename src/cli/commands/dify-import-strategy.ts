import { dirname, join, resolve } from 'node:path';
import { isPlainObject, jsonText } from '../../plain-object.js';
import { DIFY_AGENT_KIND } from '../../plugins/dify-agent/agent-options.js';
import { strategyDescriptor } from '../../plugins/dify-agent/strategy-declaration.js';
import { UsageError } from '../args.js';
import { readYamlMapping } from '../read-yaml.js';

/** The config param that tells a service's strategies apart: each tool's value is its strategy's name. */
export const STRATEGY_CONFIG_PARAM = 'strategy';

export interface StrategyImportOptions {
  readonly service: string;
  /** Which strategies of a manifest (`--strategy a,b`); undefined: its only one. */
  readonly strategies?: readonly string[];
  readonly name?: string;
  readonly description?: string;
  readonly pluginId?: string;
  readonly provider?: string;
  readonly lang: string;
}

/** What an import found: a descriptor per strategy, the plugin and provider they share, notes for stderr. */
export interface ImportedStrategies {
  readonly descriptors: Record<string, unknown>[];
  readonly pluginId: string | undefined;
  readonly provider: string | undefined;
  /** How many strategies the source offered. */
  readonly offered: number;
  readonly notes: string[];
}

interface FoundStrategy {
  readonly name: string;
  readonly path: string;
  /** The provider's own name (its YAML's identity.name). */
  readonly provider: string;
}

function identityName(doc: Record<string, unknown>): string | undefined {
  const identity = doc['identity'];
  return isPlainObject(identity) && identity['name'] !== undefined ? jsonText(identity['name']) : undefined;
}

/** Every strategy a manifest declares: `plugins.agent_strategies` -> provider YAML -> `strategies`. */
async function manifestStrategies(manifest: Record<string, unknown>, manifestDir: string): Promise<FoundStrategy[]> {
  const plugins = manifest['plugins'];
  const providerPaths = isPlainObject(plugins) && Array.isArray(plugins['agent_strategies']) ? plugins['agent_strategies'].map(String) : [];
  const found: FoundStrategy[] = [];
  for (const providerPath of providerPaths) {
    const provider = await readYamlMapping(join(manifestDir, providerPath));
    for (const strategyPath of Array.isArray(provider['strategies']) ? provider['strategies'].map(String) : []) {
      const path = join(manifestDir, strategyPath);
      found.push({ name: identityName(await readYamlMapping(path)) ?? strategyPath, path, provider: identityName(provider) ?? '' });
    }
  }
  return found;
}

function picked(found: readonly FoundStrategy[], wanted: readonly string[] | undefined): FoundStrategy[] {
  const names = found.map((strategy) => strategy.name).join(', ');
  if (!wanted) {
    if (found.length === 1) return [...found];
    throw new UsageError(`give --strategy; the plugin has: ${names}`);
  }
  return wanted.map((name) => {
    const pick = found.find((strategy) => strategy.name === name);
    if (!pick) throw new UsageError(`no strategy ${name}; the plugin has: ${names}`);
    return pick;
  });
}

/**
 * A strategy plugin's manifest (`plugins.agent_strategies` -> provider YAML -> `strategies`),
 * or one strategy YAML next to its plugin's manifest, as dify-agent tool descriptors: one per
 * strategy picked, each with its strategy's name as its value of STRATEGY_CONFIG_PARAM, so
 * that one service can carry several.
 */
export async function importStrategies(file: string, doc: Record<string, unknown>, options: StrategyImportOptions): Promise<ImportedStrategies> {
  let manifest: Record<string, unknown> | undefined;
  let sources: { doc: Record<string, unknown>; provider: string | undefined }[];
  let offered: number;
  if (isPlainObject(doc['plugins']) && Array.isArray(doc['plugins']['agent_strategies'])) {
    manifest = doc;
    const found = await manifestStrategies(doc, dirname(file));
    offered = found.length;
    sources = [];
    for (const pick of picked(found, options.strategies)) sources.push({ doc: await readYamlMapping(pick.path), provider: pick.provider });
  } else {
    // A strategy file sits in <plugin>/strategies/: its manifest, when there, names the plugin,
    // and the provider whose `strategies` list this file.
    const manifestDir = dirname(dirname(file));
    manifest = await readYamlMapping(join(manifestDir, 'manifest.yaml')).catch(() => undefined);
    const found = manifest ? await manifestStrategies(manifest, manifestDir).catch(() => []) : [];
    offered = 1;
    sources = [{ doc, provider: found.find((strategy) => resolve(strategy.path) === resolve(file))?.provider }];
  }
  if (sources.length > 1 && options.name) throw new UsageError("--name names one tool: with several strategies each tool takes its strategy's name");
  const pluginId =
    options.pluginId ??
    (manifest && typeof manifest['author'] === 'string' && typeof manifest['name'] === 'string' ? `${manifest['author']}/${manifest['name']}` : undefined);
  const providerName = sources[0]?.provider;
  const provider = options.provider ?? (pluginId && providerName ? `${pluginId}/${providerName}` : undefined);
  const descriptors: Record<string, unknown>[] = [];
  const needsParams = new Set<string>();
  for (const source of sources) {
    // A manifest may hold several providers; each tool names its own when it is not the first's.
    const own = pluginId && source.provider && source.provider !== providerName && !options.provider ? `${pluginId}/${source.provider}` : provider;
    const built = strategyDescriptor({
      doc: source.doc,
      service: options.service,
      name: options.name,
      description: options.description,
      pluginId,
      provider: own,
      lang: options.lang,
    });
    const pluginOptions = built.descriptor['plugin-options'] as Record<string, unknown>;
    descriptors.push({ ...built.descriptor, [STRATEGY_CONFIG_PARAM]: pluginOptions['strategy'] });
    for (const param of built.needsParams) needsParams.add(param);
  }
  const notes = ['note: name the catalog tools the agent may call in "plugin-options".tools, and the model (plugin "model") on the service or here'];
  if (!provider) notes.push('note: give --provider <org/plugin/provider> (the strategy provider)');
  if (needsParams.size > 0) notes.push(`note: the strategy also requires ${[...needsParams].join(', ')}: give them in "plugin-options".params`);
  if (descriptors.length === 1)
    notes.push(
      `note: the tool's "${STRATEGY_CONFIG_PARAM}" tells it apart from other strategies of its service when the service has "config-params": ["${STRATEGY_CONFIG_PARAM}"]`,
    );
  return { descriptors, pluginId, provider, offered, notes };
}

/** The tool-service several strategies share: told apart by STRATEGY_CONFIG_PARAM, the plugin and provider on it. */
export function strategyServicePlugin(imported: ImportedStrategies): Record<string, unknown> {
  return {
    kind: DIFY_AGENT_KIND,
    ...(imported.pluginId ? { plugin_id: imported.pluginId } : {}),
    ...(imported.provider ? { provider: imported.provider } : {}),
  };
}
