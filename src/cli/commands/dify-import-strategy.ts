import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isPlainObject } from '../../plain-object.js';
import { strategyDescriptor } from '../../plugins/dify-agent/strategy-declaration.js';
import { UsageError } from '../args.js';

async function yamlAt(path: string): Promise<Record<string, unknown>> {
  const doc: unknown = parseYaml(await readFile(path, 'utf8'));
  if (!isPlainObject(doc)) throw new Error(`${path}: not a YAML mapping`);
  return doc;
}

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
export async function importStrategy(file: string, doc: Record<string, unknown>, o: StrategyImportOptions): Promise<{ descriptor: Record<string, unknown>; notes: string[] }> {
  let manifest: Record<string, unknown> | undefined;
  let manifestDir: string;
  let strategyDoc = doc;
  let providerName: string | undefined;
  if (isPlainObject(doc['plugins']) && Array.isArray(doc['plugins']['agent_strategies'])) {
    manifest = doc;
    manifestDir = dirname(file);
    const found: { name: string; path: string; provider: string }[] = [];
    for (const p of doc['plugins']['agent_strategies'].map(String)) {
      const provider = await yamlAt(join(manifestDir, p));
      const pname = String((provider['identity'] as Record<string, unknown> | undefined)?.['name'] ?? '');
      for (const s of Array.isArray(provider['strategies']) ? provider['strategies'].map(String) : []) {
        const sdoc = await yamlAt(join(manifestDir, s));
        found.push({ name: String((sdoc['identity'] as Record<string, unknown> | undefined)?.['name'] ?? s), path: join(manifestDir, s), provider: pname });
      }
    }
    const pick = o.strategy ? found.find((f) => f.name === o.strategy) : found.length === 1 ? found[0] : undefined;
    if (!pick) throw new UsageError(`${o.strategy ? `no strategy ${o.strategy}; ` : 'give --strategy; '}the plugin has: ${found.map((f) => f.name).join(', ')}`);
    strategyDoc = await yamlAt(pick.path);
    providerName = pick.provider;
  } else {
    // A strategy file sits in <plugin>/strategies/: its manifest, when there, names the plugin.
    manifestDir = dirname(dirname(file));
    manifest = await yamlAt(join(manifestDir, 'manifest.yaml')).catch(() => undefined);
  }
  const pluginId = o.pluginId ?? (manifest && typeof manifest['author'] === 'string' && typeof manifest['name'] === 'string' ? `${manifest['author']}/${manifest['name']}` : undefined);
  const provider = o.provider ?? (pluginId && providerName ? `${pluginId}/${providerName}` : undefined);
  const { descriptor, needsParams } = strategyDescriptor({ doc: strategyDoc, service: o.service, name: o.name, description: o.description, pluginId, provider, lang: o.lang });
  const notes = ['note: name the catalog tools the agent may call in "plugin-options".tools, and the model (plugin "model") on the service or here'];
  if (!provider) notes.push('note: give --provider <org/plugin/provider> (the strategy provider)');
  if (needsParams.length > 0) notes.push(`note: the strategy also requires ${needsParams.join(', ')}: give them in "plugin-options".params`);
  return { descriptor, notes };
}
