import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import type { PluginFactory } from '../../../src/plugins/plugin.js';
import { PluginRegistry } from '../../../src/plugins/registry.js';
import { serviceDescriptor } from '../../support/descriptors.js';
import { catalogOf, entry } from '../../support/harness.js';

const options = z.object({ label: z.string() });

/** A kind whose code "loads" through a spy, answering with its label. */
function spiedKind(kind: string) {
  const factory: PluginFactory<z.output<typeof options>> = {
    kind,
    serviceOptions: options,
    create: async (s) => ({ kind, invoke: async () => s.plugin.options.label, close: async () => {} }),
  };
  const load = vi.fn(async () => factory);
  return { kind, serviceOptions: options, load };
}

const service = (id: string, kind: string) => entry('tool-service', id, serviceDescriptor(id, { plugin: { kind, label: id } }));

describe('the plugin registry', () => {
  it('loads each shipped kind to a factory of the same name and the very schemas it parses descriptors with', async () => {
    const registry = defaultRegistry();
    for (const kind of registry.kinds()) {
      const factory = await registry.load(kind);
      expect(factory?.kind).toBe(kind);
      expect(factory?.serviceOptions).toBe(registry.schemas(kind)?.serviceOptions);
      expect(factory?.toolOptions).toBe(registry.schemas(kind)?.toolOptions);
    }
    expect(registry.kinds()).toEqual(['dify-agent', 'dify-daemon', 'dify-slim', 'mcp', 'module', 'openapi']);
  });

  it('loads a kind only for the descriptors that use it, and once', async () => {
    const used = spiedKind('used');
    const unused = spiedKind('unused');
    const registry = new PluginRegistry().registerKind(used).registerKind(unused);
    expect(registry.schemas('unused')?.serviceOptions).toBe(options);
    await catalogOf([service('a', 'used'), service('b', 'used')], registry);
    expect(used.load).toHaveBeenCalledTimes(1);
    expect((await registry.load('used'))?.kind).toBe('used');
    expect(used.load).toHaveBeenCalledTimes(1);
    expect(unused.load).not.toHaveBeenCalled();
  });

  it('refuses a loaded factory whose schemas are not the ones it was registered with', async () => {
    const drifted = spiedKind('drifted');
    const registry = new PluginRegistry().registerKind({ ...drifted, serviceOptions: z.object({ label: z.string() }) });
    await expect(registry.load('drifted')).rejects.toThrow(/drifted loaded a factory whose kind or schemas differ/);
    expect(await registry.load('nothing-of-the-kind')).toBeUndefined();
  });
});
