import type { PluginFactory } from './plugin.js';

/**
 * The plugin kinds a worker knows, by name. Checked when descriptors load, before anything
 * starts. A factory comes back with its option types unknown: the catalog build parsed each
 * service's options with its own kind's schemas, which is what lets the kind read them typed.
 */
export class PluginRegistry {
  private readonly factories = new Map<string, PluginFactory>();

  register<S, T>(factory: PluginFactory<S, T>): this {
    if (this.factories.has(factory.kind)) throw new Error(`plugin kind ${factory.kind} is registered twice`);
    this.factories.set(factory.kind, factory);
    return this;
  }

  get(kind: string): PluginFactory | undefined {
    return this.factories.get(kind);
  }

  kinds(): string[] {
    return [...this.factories.keys()].sort();
  }
}
