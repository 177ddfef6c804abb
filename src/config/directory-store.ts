import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { checkName, type ConfigEntry, type ConfigItem, type ConfigStore } from './config-store.js';

const EXTENSIONS = ['.json', '.yaml', '.yml'] as const;

/** `<dir>/<type>/<key>.json` (YAML accepted for reading). */
export class DirectoryConfigStore implements ConfigStore {
  constructor(readonly dir: string) {}

  private display(path: string): string {
    const rel = relative(process.cwd(), path);
    return rel.startsWith('..') ? path : rel;
  }

  private async read(type: string, file: string): Promise<ConfigEntry> {
    const ext = EXTENSIONS.find((extension) => file.endsWith(extension)) ?? '.json';
    const key = file.slice(0, -ext.length);
    const path = join(this.dir, type, file);
    const source = this.display(path);
    const text = await readFile(path, 'utf8');
    try {
      // Imported on use: a worker on JSON descriptors never holds it (docs/benchmarks-rationale.md).
      const value: unknown = ext === '.json' ? JSON.parse(text) : (await import('yaml')).parse(text);
      return { type, key, value, source };
    } catch (err) {
      return { type, key, value: undefined, error: `not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`, source };
    }
  }

  private async files(type: string): Promise<string[]> {
    checkName(type);
    try {
      const names = await readdir(join(this.dir, type));
      return names.filter((name) => EXTENSIONS.some((extension) => name.endsWith(extension))).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** The type directories: symlinks followed (a Kubernetes ConfigMap mount is made of them), dot-names skipped (its `..data`). */
  async types(): Promise<string[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((name) => !name.startsWith('.')).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const dirs: string[] = [];
    for (const n of names) if ((await stat(join(this.dir, n)).catch(() => undefined))?.isDirectory()) dirs.push(n);
    return dirs;
  }

  async entries(only?: readonly string[]): Promise<ConfigEntry[]> {
    const types = (await this.types()).filter((type) => !only || only.includes(type));
    const out: ConfigEntry[] = [];
    for (const type of types) for (const file of await this.files(type)) out.push(await this.read(type, file));
    return out;
  }

  async keys(type: string): Promise<string[]> {
    return (await this.files(type)).map((file) => file.replace(/\.(json|ya?ml)$/, ''));
  }

  async get(type: string, key: string): Promise<ConfigEntry | undefined> {
    checkName(type, key);
    const file = (await this.files(type)).find((candidate) => candidate.replace(/\.(json|ya?ml)$/, '') === key);
    return file ? this.read(type, file) : undefined;
  }

  /** One file per item; each written whole (a reader never sees half a file). */
  async put(items: readonly ConfigItem[]): Promise<void> {
    for (const { type, key } of items) checkName(type, key);
    const parsed = items.map((item) => JSON.parse(item.value) as unknown);
    for (const [n, { type, key }] of items.entries()) await this.write(type, key, parsed[n]);
  }

  private async write(type: string, key: string, parsed: unknown): Promise<void> {
    const dir = join(this.dir, type);
    await mkdir(dir, { recursive: true });
    for (const file of await this.files(type)) {
      if (file !== `${key}.json` && file.replace(/\.(json|ya?ml)$/, '') === key) await rm(join(dir, file));
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
    for (const file of await this.files(type)) {
      if (file.replace(/\.(json|ya?ml)$/, '') === key) {
        await rm(join(this.dir, type, file));
        found = true;
      }
    }
    return found;
  }
}
