/**
 * Plugins built from descriptors as the app builds them, called directly (no transport): for
 * tests about what a plugin sends to its backend, where each call needs a signal of its own.
 */
import type { Logger } from 'pino';
import { buildCatalog } from '../../src/assembly/build-catalog.js';
import type { Catalog } from '../../src/catalog/catalog.js';
import type { ConfigEntry } from '../../src/config/config-store.js';
import { hasPlugin, isAsyncIterable, type Plugin, type PluginContext } from '../../src/plugins/plugin.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import { ExecPolicy } from '../../src/policy/exec-policy.js';

export interface DirectPlugins {
  readonly catalog: Catalog;
  readonly plugins: ReadonlyMap<string, Plugin>;
  /** One call of a tool, by its name, on its own signal; its whole observation text. */
  call(tool: string, args?: Record<string, unknown>, signal?: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

export async function directPlugins(entries: readonly ConfigEntry[], registry: PluginRegistry, ctx: PluginContext): Promise<DirectPlugins> {
  const catalog = await buildCatalog(entries, registry, ctx, { policy: new ExecPolicy('directory') });
  const plugins = new Map<string, Plugin>();
  for (const s of catalog.services.values()) if (hasPlugin(s)) plugins.set(s.id, await (await registry.load(s.plugin.kind))!.create(s, ctx));
  const log: Logger = ctx.log;
  return {
    catalog,
    plugins,
    async call(name, args = {}, signal = AbortSignal.timeout(20_000)) {
      const tool = catalog.tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      const service = catalog.services.get(tool.service)!;
      const out = plugins
        .get(service.id)!
        .invoke({ requestId: name, service, tool, config: {}, arguments: args, stream: false, timeoutMs: 20_000, signal, log });
      if (!isAsyncIterable(out)) return out;
      let text = '';
      for await (const chunk of out) text += chunk;
      return text;
    },
    async close() {
      for (const p of plugins.values()) await p.close?.();
    },
  };
}
