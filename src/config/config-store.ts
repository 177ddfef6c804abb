/** One config item: TrustGraph's `type -> key -> value` model. */
export interface ConfigEntry {
  readonly type: string;
  readonly key: string;
  /** Parsed JSON (or YAML) value, or the parse error. */
  readonly value: unknown;
  readonly error?: string;
  /** Where it came from, for error messages. */
  readonly source: string;
}

/** An item to write: its value as JSON text, as TrustGraph's config service stores it. */
export interface ConfigItem {
  readonly type: string;
  readonly key: string;
  readonly value: string;
}

/** Where descriptors live: a directory, or TrustGraph's config service. */
export interface ConfigStore {
  /** Every item of the given types (all types when omitted). */
  entries(types?: readonly string[], signal?: AbortSignal): Promise<ConfigEntry[]>;
  keys(type: string): Promise<string[]>;
  get(type: string, key: string): Promise<ConfigEntry | undefined>;
  /** Values are JSON text, checked to parse before anything is written; many items at once. */
  put(items: readonly ConfigItem[]): Promise<void>;
  /** Returns false when there was nothing to delete. */
  delete(type: string, key: string): Promise<boolean>;
  close?(): Promise<void>;
}

// A name is one path segment: no separators, and never `.` or `..`.
const NAME = /^(?!\.{1,2}$)[A-Za-z0-9_.@-]+$/;

export function checkName(type: string, key?: string): void {
  if (!NAME.test(type)) throw new Error(`invalid config type "${type}"`);
  if (key !== undefined && !NAME.test(key)) throw new Error(`invalid config key "${key}": use letters, digits, and . _ @ -`);
}
