import { isAbsolute, join, resolve } from 'node:path';
import { resolve as resolveImport } from 'import-meta-resolve';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { ToolService } from '../../catalog/descriptors.js';
import { observationText } from '../../envelope/response.js';
import { isAsyncIterable, type Observation, type Plugin, type PluginContext, type PluginFactory, type ToolCall } from '../plugin.js';
import { BUILTIN_TOOLS } from './builtin/index.js';
import type { ModuleTool } from './module-tool.js';

const options = z.strictObject({
  /** `builtin:<name>`, a path relative to the config directory, or a package installed where the config directory can import it. */
  module: z.string().min(1),
  /** The export to call; default `default`. */
  export: z.string().min(1).default('default'),
});
type ModuleOptions = z.output<typeof options>;

async function loadTool(o: ModuleOptions, configDir: string): Promise<ModuleTool> {
  let mod: Record<string, unknown>;
  if (o.module.startsWith('builtin:')) {
    const name = o.module.slice('builtin:'.length);
    const load = Object.hasOwn(BUILTIN_TOOLS, name) ? BUILTIN_TOOLS[name] : undefined;
    if (!load) throw new Error(`unknown builtin module "${name}" (available: ${Object.keys(BUILTIN_TOOLS).join(', ')})`);
    mod = await load();
  } else if (o.module.startsWith('.') || isAbsolute(o.module)) {
    const path = isAbsolute(o.module) ? o.module : resolve(configDir, o.module);
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } else {
    // As the config directory would import it (its node_modules, or a parent's), not as
    // toolwire's own install would: the operator's tools live with the operator's descriptors.
    let url: string;
    try {
      url = resolveImport(o.module, pathToFileURL(join(resolve(configDir), 'descriptors.js')).href);
    } catch (err) {
      throw new Error(`cannot find package "${o.module}" from ${resolve(configDir)} (install it there, or give a path): ${(err as Error).message}`, { cause: err });
    }
    mod = (await import(url)) as Record<string, unknown>;
  }
  const fn = mod[o.export];
  if (typeof fn !== 'function') throw new Error(`module "${o.module}" has no function export "${o.export}"`);
  return fn as ModuleTool;
}

class ModulePlugin implements Plugin {
  readonly kind = 'module';
  constructor(private readonly fn: ModuleTool) {}

  invoke(call: ToolCall): Observation {
    const out = this.fn({
      tool: call.tool?.name,
      service: call.service.id,
      requestId: call.requestId,
      config: call.config,
      arguments: call.arguments,
      ...(call.user !== undefined ? { user: call.user } : {}),
      // Getters: reading them is what makes the call's AbortController and child logger.
      get signal() {
        return call.signal;
      },
      get log() {
        return call.log;
      },
    });
    return isAsyncIterable(out) ? chunksOf(out) : Promise.resolve(out).then(observationText);
  }
}

async function* chunksOf(out: AsyncIterable<unknown>): AsyncIterable<string> {
  for await (const chunk of out) yield observationText(chunk);
}

/** In-process tools named by descriptors (never by a request). */
export const modulePluginFactory: PluginFactory<ModuleOptions> = {
  kind: 'module',
  serviceOptions: options,
  async check(service: ToolService, _tools, ctx: PluginContext) {
    try {
      await loadTool(service.plugin!.options as ModuleOptions, ctx.configDir);
      return [];
    } catch (err) {
      return [`${service.source}: plugin.module: ${(err as Error).message}`];
    }
  },
  async create(service: ToolService, ctx: PluginContext) {
    return new ModulePlugin(await loadTool(service.plugin!.options as ModuleOptions, ctx.configDir));
  },
};
