import { dirname, join } from 'node:path';
import { isPlainObject, jsonText } from '../../plain-object.js';
import { strategyDescriptor } from '../../plugins/dify-agent/strategy-declaration.js';
import { UsageError } from '../args.js';
import { readYamlMapping } from '../read-yaml.js';

export interface StrategyImportOptions {
  readonly service: string;
  readonly strategy?: string;
  readonly name?: string;
  readonly description?: string;
  readonly pluginId?: string;
  readonly provider?: string;
  readonly lang: string;
}

/**
 * A strategy plugin's manifest (`plugins.agent_strategies` -> provider YAML -> `strategies`),
 * or one strategy YAML next to its plugin's manifest, as a dify-agent tool descriptor.
 */
export async function importStrategy(
  file: string,
  doc: Record<string, unknown>,
  options: StrategyImportOptions,
): Promise<{ descriptor: Record<string, unknown>; notes: string[] }> {
  let manifest: Record<string, unknown> | undefined;
  let manifestDir: string;
  let strategyDoc = doc;
  let providerName: string | undefined;
  if (isPlainObject(doc['plugins']) && Array.isArray(doc['plugins']['agent_strategies'])) {
    manifest = doc;
    manifestDir = dirname(file);
    const found: { name: string; path: string; provider: string }[] = [];
    for (const providerPath of doc['plugins']['agent_strategies'].map(String)) {
      const provider = await readYamlMapping(join(manifestDir, providerPath));
      const pname = jsonText((provider['identity'] as Record<string, unknown> | undefined)?.['name']);
      for (const strategyPath of Array.isArray(provider['strategies']) ? provider['strategies'].map(String) : []) {
        const sdoc = await readYamlMapping(join(manifestDir, strategyPath));
        found.push({
          name: jsonText((sdoc['identity'] as Record<string, unknown> | undefined)?.['name'], strategyPath),
          path: join(manifestDir, strategyPath),
          provider: pname,
        });
      }
    }
    const pick = options.strategy ? found.find((strategy) => strategy.name === options.strategy) : found.length === 1 ? found[0] : undefined;
    if (!pick)
      throw new UsageError(
        `${options.strategy ? `no strategy ${options.strategy}; ` : 'give --strategy; '}the plugin has: ${found.map((strategy) => strategy.name).join(', ')}`,
      );
    strategyDoc = await readYamlMapping(pick.path);
    providerName = pick.provider;
  } else {
    // A strategy file sits in <plugin>/strategies/: its manifest, when there, names the plugin.
    manifestDir = dirname(dirname(file));
    manifest = await readYamlMapping(join(manifestDir, 'manifest.yaml')).catch(() => undefined);
  }
  const pluginId =
    options.pluginId ??
    (manifest && typeof manifest['author'] === 'string' && typeof manifest['name'] === 'string' ? `${manifest['author']}/${manifest['name']}` : undefined);
  const provider = options.provider ?? (pluginId && providerName ? `${pluginId}/${providerName}` : undefined);
  const { descriptor, needsParams } = strategyDescriptor({
    doc: strategyDoc,
    service: options.service,
    name: options.name,
    description: options.description,
    pluginId,
    provider,
    lang: options.lang,
  });
  const notes = ['note: name the catalog tools the agent may call in "plugin-options".tools, and the model (plugin "model") on the service or here'];
  if (!provider) notes.push('note: give --provider <org/plugin/provider> (the strategy provider)');
  if (needsParams.length > 0) notes.push(`note: the strategy also requires ${needsParams.join(', ')}: give them in "plugin-options".params`);
  return { descriptor, notes };
}
