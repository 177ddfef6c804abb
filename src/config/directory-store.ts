import { readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { checkName, type ConfigEntry, type ConfigItem, type ConfigStore } from './config-store.js';

const EXTENSIONS = ['.json', '.yaml', '.yml'] as const;

/**
 * Files looked at between two turns of the event loop: about a millisecond of stat calls, so
 * that reading 11,000 descriptors never holds up the requests being served for long.
 */
const FILES_PER_TURN = 256;

/**
 * A file changed this recently is read anyway: where the filesystem keeps coarse times, a
 * second write of the same size within one tick would look unchanged.
 */
const SETTLED_NS = 2_000_000_000n;

/**
 * What tells a file changed without reading it: its inode, size, and change and modification
 * times (ns); 'unsettled' for a file changed too recently to trust them; undefined when gone.
 */
function signatureOf(path: string): string | undefined {
  const s = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (!s) return undefined;
  if (BigInt(Date.now()) * 1_000_000n - s.ctimeNs < SETTLED_NS) return 'unsettled';
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/** A file as the last read found it. */
interface KnownFile {
  readonly type: string;
  readonly file: string;
  readonly signature: string;
  readonly entry: ConfigEntry;
}

const byTypeThenFile = (left: KnownFile, right: KnownFile): number =>
  left.type === right.type ? (left.file < right.file ? -1 : left.file > right.file ? 1 : 0) : left.type < right.type ? -1 : 1;

/**
 * `<dir>/<type>/<key>.json` (YAML accepted for reading). A file whose signature is as at the
 * last read is not read again: its entry, the very same object, is handed back, so that the
 * builds downstream know it unchanged by its identity. `refresh` looks at named files only.
 */
export class DirectoryConfigStore implements ConfigStore {
  /** By path, in the order entries() gives them: the files of the last read. */
  private known = new Map<string, KnownFile>();
  /** The types the last full read was of; refresh() needs one of the same. */
  private scanned: string | undefined;

  constructor(readonly dir: string) {}

  private display(path: string): string {
    const rel = relative(process.cwd(), path);
    return rel.startsWith('..') ? path : rel;
  }

  /** The file's entry: the one read before when its signature has not moved; undefined when it is gone. */
  private async load(type: string, file: string): Promise<KnownFile | undefined> {
    const path = join(this.dir, type, file);
    const signature = signatureOf(path);
    if (signature === undefined) return undefined;
    const before = this.known.get(path);
    if (before?.signature === signature && signature !== 'unsettled') return before;
    return { type, file, signature, entry: await this.read(type, file, path) };
  }

  private async read(type: string, file: string, path: string): Promise<ConfigEntry> {
    const ext = EXTENSIONS.find((extension) => file.endsWith(extension)) ?? '.json';
    const key = file.slice(0, -ext.length);
    const source = this.display(path);
    // Synchronous: a small file is read in microseconds this way, against a round of the
    // thread pool for each of open, stat, read and close.
    const text = readFileSync(path, 'utf8');
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

  async entries(only?: readonly string[], signal?: AbortSignal): Promise<ConfigEntry[]> {
    const types = (await this.types()).filter((type) => !only || only.includes(type));
    const seen = new Map<string, KnownFile>();
    let looked = 0;
    for (const type of types) {
      for (const file of await this.files(type)) {
        if (++looked % FILES_PER_TURN === 0) {
          await yieldToLoop();
          signal?.throwIfAborted();
        }
        const found = await this.load(type, file);
        if (found) seen.set(join(this.dir, type, file), found);
      }
    }
    this.known = seen;
    this.scanned = only?.join('\u0000');
    return [...seen.values()].map((known) => known.entry);
  }

  /**
   * The entries of `only` again, looking only at `changed` files (`<type>/<file>`, as a watch
   * of the type directories names them): the others are as the last read found them. Reads
   * them all when the last read was not a full one of the same types.
   */
  async refresh(changed: Iterable<string>, only: readonly string[], signal?: AbortSignal): Promise<ConfigEntry[]> {
    if (this.scanned === undefined || this.scanned !== only.join('\u0000')) return this.entries(only, signal);
    let moved = false;
    for (const name of changed) {
      const [type, file, ...deeper] = name.split('/');
      if (!type || !file || deeper.length > 0 || !only.includes(type) || !EXTENSIONS.some((extension) => file.endsWith(extension))) continue;
      const path = join(this.dir, type, file);
      const before = this.known.get(path);
      const found = await this.load(type, file);
      if (found === before) continue;
      if (found) this.known.set(path, found);
      else this.known.delete(path);
      moved ||= !found || !before;
    }
    // A file came or went: back in the order of a full read.
    if (moved) this.known = new Map([...this.known].sort(([, left], [, right]) => byTypeThenFile(left, right)));
    return [...this.known.values()].map((known) => known.entry);
  }

  async keys(type: string): Promise<string[]> {
    return (await this.files(type)).map((file) => file.replace(/\.(json|ya?ml)$/, ''));
  }

  async get(type: string, key: string): Promise<ConfigEntry | undefined> {
    checkName(type, key);
    const file = (await this.files(type)).find((candidate) => candidate.replace(/\.(json|ya?ml)$/, '') === key);
    return file ? this.read(type, file, join(this.dir, type, file)) : undefined;
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
