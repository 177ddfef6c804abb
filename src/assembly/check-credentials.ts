import type { Catalog } from '../catalog/catalog.js';
import { hasPlugin, type PluginContext } from '../plugins/plugin.js';
import type { PluginRegistry } from '../plugins/registry.js';

/**
 * `validate --check-credentials`: each service's plugin kind asks its backend whether the
 * service's credentials are good (a kind that cannot ask is skipped), within `timeoutMs` a
 * service. Problems, each naming its descriptor.
 */
export async function credentialProblems(
  catalog: Catalog,
  registry: PluginRegistry,
  ctx: PluginContext,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string[]> {
  const problems: string[] = [];
  for (const s of catalog.services.values()) {
    if (!hasPlugin(s)) continue;
    const factory = await registry.load(s.plugin.kind);
    if (factory?.checkCredentials)
      problems.push(...(await factory.checkCredentials(s, catalog.toolsOf(s.id), ctx, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]))));
  }
  return problems;
}
