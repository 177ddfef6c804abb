import type { PluginFactory } from './plugin.js';

/** The plugin kinds a worker knows, by name. Checked when descriptors load, before anything starts. */
export class PluginRegistry {
  private readonly factories = new Map<string, PluginFactory>();

  constructor(factories: readonly PluginFactory<never, never>[] = []) {
    for (const f of factories) this.register(f);
  }

  register<S, T>(factory: PluginFactory<S, T>): this {
    if (this.factories.has(factory.kind)) throw new Error(`plugin kind ${factory.kind} is registered twice`);
    this.factories.set(factory.kind, factory as unknown as PluginFactory);
    return this;
  }

  get(kind: string): PluginFactory | undefined {
    return this.factories.get(kind);
  }

  kinds(): string[] {
    return [...this.factories.keys()].sort();
  }
}
