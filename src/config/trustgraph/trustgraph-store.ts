import { ConfigServiceError } from '../../errors.js';
import type { ConfigEntry, ConfigItem, ConfigStore } from '../config-store.js';
import { configResponseError, type ConfigApi, type ConfigRequest, type ConfigResponse } from './config-wire.js';

/** TrustGraph's names are free text (its own types include `processor:<id>`); only empty names and control characters are refused. */
const hasControl = (text: string): boolean => [...text].some((char) => char.charCodeAt(0) < 0x20);

function checkName(type: string, key?: string): void {
  if (type === '' || hasControl(type)) throw new Error(`invalid config type ${JSON.stringify(type)}`);
  if (key !== undefined && (key === '' || hasControl(key))) throw new Error(`invalid config key ${JSON.stringify(key)}`);
}

/** The items of some types with the config service's version they were read at. */
export interface VersionedEntries {
  readonly version: number;
  readonly entries: ConfigEntry[];
}

/** One workspace of TrustGraph's config service, as a ConfigStore. */
export class TrustGraphConfigStore implements ConfigStore {
  constructor(
    private readonly api: ConfigApi,
    readonly workspace: string,
  ) {}

  private async call(req: Omit<ConfigRequest, 'workspace'>, signal?: AbortSignal): Promise<ConfigResponse> {
    const r = await this.api.request({ ...req, workspace: this.workspace }, signal);
    const error = configResponseError(r);
    if (error) throw new ConfigServiceError(`the ${this.api.description} refused ${req.operation}: ${error}`);
    return r;
  }

  /**
   * Each item's entry as last read, by type and key, with its text: an item read again with
   * the same text gives the very same entry, so builds know it unchanged by its identity.
   */
  private known = new Map<string, { readonly text: string; readonly entry: ConfigEntry }>();

  private entry(type: string, key: string, text: string, seen?: Map<string, { readonly text: string; readonly entry: ConfigEntry }>): ConfigEntry {
    const id = `${type}\u0000${key}`;
    const before = this.known.get(id);
    const entry = before?.text === text ? before.entry : this.parse(type, key, text);
    seen?.set(id, { text, entry });
    return entry;
  }

  private parse(type: string, key: string, text: string): ConfigEntry {
    const source = `trustgraph:${this.workspace}/${type}/${key}`;
    try {
      return { type, key, value: JSON.parse(text) as unknown, source };
    } catch (err) {
      return { type, key, value: undefined, error: `not valid JSON: ${(err as Error).message}`, source };
    }
  }

  /**
   * Every item of `types`, one request per type as TrustGraph's processors read them. The
   * version is read with each; if it moved between the reads, they are made again, so the
   * items belong to one version.
   */
  async read(types: readonly string[], signal?: AbortSignal): Promise<VersionedEntries> {
    for (let attempt = 0; ; attempt++) {
      const entries: ConfigEntry[] = [];
      const versions = new Set<number>();
      const seen = new Map<string, { readonly text: string; readonly entry: ConfigEntry }>();
      for (const type of types) {
        const r = await this.call({ operation: 'getvalues', type }, signal);
        versions.add(r.version ?? 0);
        for (const v of r.values ?? []) entries.push(this.entry(type, v.key, v.value ?? '', seen));
      }
      if (versions.size <= 1 || attempt >= 4) {
        // Items of types not read this time are kept for the next read of them.
        for (const [id, known] of this.known) if (!seen.has(id) && !types.includes(known.entry.type)) seen.set(id, known);
        this.known = seen;
        return { version: Math.max(0, ...versions), entries };
      }
    }
  }

  async entries(types: readonly string[] = ['tool-service', 'tool'], signal?: AbortSignal): Promise<ConfigEntry[]> {
    return (await this.read(types, signal)).entries;
  }

  async keys(type: string): Promise<string[]> {
    checkName(type);
    return [...((await this.call({ operation: 'list', type })).directory ?? [])].sort();
  }

  async get(type: string, key: string): Promise<ConfigEntry | undefined> {
    checkName(type, key);
    const v = (await this.call({ operation: 'get', keys: [{ type, key }] })).values?.[0];
    // A missing key comes back as a value of null.
    return v?.value === undefined || v.value === null ? undefined : this.entry(type, key, v.value);
  }

  /** One request for all items: the service applies them together and sends one poke. */
  async put(items: readonly ConfigItem[]): Promise<void> {
    for (const i of items) {
      checkName(i.type, i.key);
      JSON.parse(i.value);
    }
    await this.call({ operation: 'put', values: items.map((item) => ({ type: item.type, key: item.key, value: item.value })) });
  }

  async delete(type: string, key: string): Promise<boolean> {
    if (!(await this.get(type, key))) return false;
    await this.call({ operation: 'delete', keys: [{ type, key }] });
    return true;
  }

  close(): Promise<void> {
    return this.api.close();
  }
}
