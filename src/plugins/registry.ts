import type { KindSettings } from './kind-settings.js';
import type { PluginFactory } from './plugin.js';

/** What descriptors are parsed with: a kind's name and its schemas, without its code. */
export type PluginSchemas<S = unknown, T = unknown> = Pick<PluginFactory<S, T>, 'kind' | 'serviceOptions' | 'toolOptions'>;

/**
 * A plugin kind before its code is loaded. The code (a backend's SDK, an HTTP client, a
 * parser) is imported the first time a descriptor of the kind is checked or served, so a
 * worker holds only the kinds its descriptors use.
 */
export interface PluginKind<S = unknown, T = unknown> extends PluginSchemas<S, T> {
  /** The worker settings the kind reads; none when absent. */
  readonly settings?: KindSettings;
  load(): Promise<PluginFactory<S, T>>;
}

/** The plugin core's own settings, whichever kinds there are: TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS (blob-sink.ts). */
const CORE_SETTINGS: KindSettings = { prefixes: ['TOOLWIRE_PLUGIN_'], secrets: [] };

interface Entry {
  readonly schemas: PluginKind;
  loaded?: Promise<PluginFactory>;
}

/**
 * The plugin kinds a worker knows, by name. Checked when descriptors load, before anything
 * starts. A factory comes back with its option types unknown: the catalog build parsed each
 * service's options with its own kind's schemas, which is what lets the kind read them typed.
 */
export class PluginRegistry {
  private readonly entries = new Map<string, Entry>();

  /** A kind whose code is already loaded. */
  register<S, T>(factory: PluginFactory<S, T>): this {
    return this.registerKind({ kind: factory.kind, serviceOptions: factory.serviceOptions, toolOptions: factory.toolOptions, load: async () => factory });
  }

  /** A kind whose code is loaded when first needed. */
  registerKind<S, T>(kind: PluginKind<S, T>): this {
    if (this.entries.has(kind.kind)) throw new Error(`plugin kind ${kind.kind} is registered twice`);
    this.entries.set(kind.kind, { schemas: kind });
    return this;
  }

  /** The schemas a kind's descriptors are parsed with; loads nothing. */
  schemas(kind: string): PluginSchemas | undefined {
    return this.entries.get(kind)?.schemas;
  }

  /** The kind's factory, its code imported on the first call. */
  load(kind: string): Promise<PluginFactory | undefined> {
    const entry = this.entries.get(kind);
    if (!entry) return Promise.resolve(undefined);
    entry.loaded ??= entry.schemas.load().then((factory) => {
      const { schemas } = entry;
      // Descriptors were parsed with the declared schemas; a factory reading them typed must mean the same ones.
      if (factory.kind !== schemas.kind || factory.serviceOptions !== schemas.serviceOptions || factory.toolOptions !== schemas.toolOptions)
        throw new Error(`plugin kind ${schemas.kind} loaded a factory whose kind or schemas differ from those it was registered with`);
      return factory;
    });
    return entry.loaded;
  }

  /** What the plugins read of the worker's environment: the core's settings and each kind's. */
  declaredSettings(): KindSettings[] {
    return [CORE_SETTINGS, ...[...this.entries.values()].flatMap((entry) => (entry.schemas.settings ? [entry.schemas.settings] : []))];
  }

  kinds(): string[] {
    return [...this.entries.keys()].sort();
  }
}
