import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';

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

/** Where descriptors live. The directory store is the first; a Pulsar config topic can follow. */
export interface ConfigStore {
  entries(signal?: AbortSignal): Promise<ConfigEntry[]>;
  keys(type: string): Promise<string[]>;
  get(type: string, key: string): Promise<ConfigEntry | undefined>;
  /** `value` is JSON text; it is checked to parse before anything is written. */
  put(type: string, key: string, value: string): Promise<void>;
  /** Returns false when there was nothing to delete. */
  delete(type: string, key: string): Promise<boolean>;
}

const EXTENSIONS = ['.json', '.yaml', '.yml'] as const;
// A name is one path segment: no separators, and never `.` or `..`.
const KEY = /^(?!\.{1,2}$)[A-Za-z0-9_.@-]+$/;

/** `<dir>/<type>/<key>.json` (YAML accepted for reading). */
export class DirectoryConfigStore implements ConfigStore {
  constructor(readonly dir: string) {}

  private display(path: string): string {
    const rel = relative(process.cwd(), path);
    return rel.startsWith('..') ? path : rel;
  }

  private async read(type: string, file: string): Promise<ConfigEntry> {
    const ext = EXTENSIONS.find((e) => file.endsWith(e)) ?? '.json';
    const key = file.slice(0, -ext.length);
    const path = join(this.dir, type, file);
    const source = this.display(path);
    const text = await readFile(path, 'utf8');
    try {
      const value: unknown = ext === '.json' ? JSON.parse(text) : parseYaml(text);
      return { type, key, value, source };
    } catch (err) {
      return { type, key, value: undefined, error: `not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`, source };
    }
  }

  private async files(type: string): Promise<string[]> {
    if (!KEY.test(type)) throw new Error(`invalid config type "${type}"`);
    try {
      const names = await readdir(join(this.dir, type));
      return names.filter((n) => EXTENSIONS.some((e) => n.endsWith(e))).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  async entries(): Promise<ConfigEntry[]> {
    let types: string[];
    try {
      types = (await readdir(this.dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: ConfigEntry[] = [];
    for (const type of types) for (const f of await this.files(type)) out.push(await this.read(type, f));
    return out;
  }

  async keys(type: string): Promise<string[]> {
    return (await this.files(type)).map((f) => f.replace(/\.(json|ya?ml)$/, ''));
  }

  async get(type: string, key: string): Promise<ConfigEntry | undefined> {
    checkName(type, key);
    const file = (await this.files(type)).find((f) => f.replace(/\.(json|ya?ml)$/, '') === key);
    return file ? this.read(type, file) : undefined;
  }

  async put(type: string, key: string, value: string): Promise<void> {
    checkName(type, key);
    const parsed: unknown = JSON.parse(value);
    const dir = join(this.dir, type);
    await mkdir(dir, { recursive: true });
    for (const f of await this.files(type)) {
      if (f !== `${key}.json` && f.replace(/\.(json|ya?ml)$/, '') === key) await rm(join(dir, f));
    }
    const path = join(dir, `${key}.json`);
    // Write then rename, so a reader never sees half a file.
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(parsed, null, 2)}\n`);
    await rename(tmp, path);
  }

  async delete(type: string, key: string): Promise<boolean> {
    checkName(type, key);
    let found = false;
    for (const f of await this.files(type)) {
      if (f.replace(/\.(json|ya?ml)$/, '') === key) {
        await rm(join(this.dir, type, f));
        found = true;
      }
    }
    return found;
  }
}

function checkName(type: string, key: string): void {
  if (!KEY.test(type)) throw new Error(`invalid config type "${type}"`);
  if (!KEY.test(key)) throw new Error(`invalid config key "${key}": use letters, digits, and . _ @ -`);
}
