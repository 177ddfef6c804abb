import { z } from 'zod';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { buildCatalog } from '../../src/assembly/build-catalog.js';
import type { Catalog } from '../../src/catalog/catalog.js';
import type { Tool, ToolService } from '../../src/catalog/descriptors.js';
import type { ConfigEntry } from '../../src/config/config-store.js';
import { defaultRegistry } from '../../src/plugins/default-registry.js';
import { hasPlugin, type Plugin, type PluginContext, type ServiceWith, type ToolWith } from '../../src/plugins/plugin.js';
import type { PluginRegistry } from '../../src/plugins/registry.js';
import { loadSecrets } from '../../src/secrets.js';
import { ExecPolicy } from '../../src/policy/exec-policy.js';

/** A logger whose lines are kept, for tests that read (or grep) the log. */
export function captureLogger(level = 'debug'): { log: Logger; lines: () => string[] } {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(l);
      cb();
    },
  });
  return { log: pino({ level }, dest), lines: () => lines };
}

export function entry(type: 'tool-service' | 'tool', key: string, value: unknown): ConfigEntry {
  return { type, key, value, source: `${type}/${key}.json` };
}

export function pluginContext(log: Logger, configDir = 'config'): PluginContext {
  return { log, configDir, secrets: loadSecrets({}), settings: {} };
}

export async function catalogOf(entries: ConfigEntry[], registry: PluginRegistry = defaultRegistry(), log = captureLogger().log): Promise<Catalog> {
  return buildCatalog(entries, registry, pluginContext(log), { policy: new ExecPolicy('directory') });
}

/** Makes a service's plugin from its kind in `registry`, as the app does (a worker's createPlugin). */
export function pluginMaker(registry: PluginRegistry = defaultRegistry(), log = captureLogger().log): (s: ToolService) => Promise<Plugin | undefined> {
  return async (s) => (hasPlugin(s) ? (await registry.load(s.plugin.kind))!.create(s, pluginContext(log)) : undefined);
}

/**
 * A catalog service as its kind's factory takes it, for tests that call a factory directly
 * (the app goes through the registry: the catalog build parsed the options with that kind).
 */
export function asServed<S = unknown>(service: ToolService | undefined): ServiceWith<S> {
  if (!service || !hasPlugin(service)) throw new Error(`${service?.id ?? 'no service'}: names no plugin kind`);
  return service as ServiceWith<S>;
}

/** A service's tools as its kind's factory takes them (see asServed). */
export function asTools<T = unknown>(tools: readonly Tool[]): ToolWith<T>[] {
  return tools as ToolWith<T>[];
}

/** A plugin kind whose behaviour each test supplies, by name. */
export type Behaviour = (call: import('../../src/plugins/plugin.js').ToolCall) => import('../../src/plugins/plugin.js').Observation;

export function testRegistry(behaviours: Record<string, Behaviour>): PluginRegistry {
  const registry = defaultRegistry();
  registry.register({
    kind: 'test',
    serviceOptions: z.object({ behaviour: z.string() }),
    async create(s) {
      const name = s.plugin.options.behaviour;
      return { kind: 'test', invoke: (call) => behaviours[name]!(call) };
    },
  });
  return registry;
}

/** A short random suffix for topic and subscription names shared with a real broker. */
export function uniqueSuffix(): string {
  return Math.random().toString(36).slice(2, 10);
}
