import type { Catalog } from '../catalog/catalog.js';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import { hasPlugin, type PluginContext } from '../plugins/plugin.js';
import type { PluginRegistry } from '../plugins/registry.js';

/**
 * The tools with their arguments `"from-module"` filled in: for a service just checked
 * (`checked`), as its plugin kind reads them from the code; for one unchanged, the very tool
 * the catalog served (`previous`), so that the reload sees it unchanged. Problems (a kind
 * that reads no arguments from code) are added to `problems`.
 */
export async function withModuleArguments(
  tools: readonly Tool[],
  checked: readonly ToolService[],
  previous: Catalog | undefined,
  registry: PluginRegistry,
  ctx: PluginContext,
  problems: string[],
): Promise<Tool[]> {
  if (!tools.some((tool) => tool.argumentsFromModule)) return [...tools];
  const derived = new Map<string, Tool['parameters']>();
  // Grouped once: at a start every service is checked, and a filter per service would be services x tools.
  const byService = new Map<string, Tool[]>();
  for (const tool of tools) {
    const own = byService.get(tool.service);
    if (own) own.push(tool);
    else byService.set(tool.service, [tool]);
  }
  for (const service of checked) {
    const own = byService.get(service.id) ?? [];
    if (!own.some((tool) => tool.argumentsFromModule)) continue;
    const factory = hasPlugin(service) ? await registry.load(service.plugin.kind) : undefined;
    if (!hasPlugin(service) || !factory?.toolParameters) {
      for (const tool of own.filter((t) => t.argumentsFromModule))
        problems.push(`${tool.source}: arguments: "from-module" is for the tools of a module service (${service.id} is not one): write the arguments`);
      continue;
    }
    for (const [name, parameters] of await factory.toolParameters(service, own, ctx)) derived.set(name, parameters);
  }
  const fresh = new Set(checked.map((service) => service.id));
  return tools.map((tool) => {
    if (!tool.argumentsFromModule) return tool;
    if (fresh.has(tool.service)) return { ...tool, parameters: derived.get(tool.name) ?? [] };
    return previous?.tools.get(tool.name) ?? tool;
  });
}
