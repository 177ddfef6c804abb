import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { fingerprint, type ConfigSnapshot, type ConfigSource } from '../../config/config-source.js';
import type { ConfigEntry } from '../../config/config-store.js';
import { isPlainObject } from '../../plain-object.js';
import { moduleFile } from './module-plugin.js';
import { watchRevision } from './module-revision.js';

/**
 * `toolwire run --watch` (on a config directory only: the watched directories are the
 * operator's): the descriptors of `inner`, with each module service's `plugin.revision` set
 * (see watchRevision) to how often the files beside its module have changed. A saved
 * change thus reads as a changed service, and goes the way every live change goes: the
 * catalog is built and checked whole (the module imported afresh), the service's plugin is
 * swapped while calls in flight finish on the old one, and a module that does not import
 * (a syntax error) is refused, logged with where it is, while the last good code serves.
 *
 * The directory holding each module is watched (not below it: a project's node_modules
 * would cost a watch per file) while a descriptor names the module. A development aid: each
 * revision's modules stay loaded (see importModuleFile).
 */
export class ModuleWatchSource implements ConfigSource {
  readonly description: string;
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly revisions = new Map<string, number>();
  private changed: (() => void) | undefined;

  constructor(
    private readonly inner: ConfigSource,
    private readonly configDir: string,
    private readonly log: Logger,
  ) {
    this.description = `${inner.description}, modules watched`;
  }

  async watch(changed: () => void, signal?: AbortSignal): Promise<void> {
    this.changed = changed;
    await this.inner.watch(changed, signal);
  }

  async read(signal?: AbortSignal): Promise<ConfigSnapshot> {
    const snap = await this.inner.read(signal);
    const entries: ConfigEntry[] = [];
    const named = new Set<string>();
    for (const e of snap.entries) entries.push(await this.stamped(e, named));
    this.unwatchAllBut(named);
    return { version: `${snap.version}.${fingerprint(entries)}`, entries };
  }

  /** The directories watched now: those of the modules the last read named. */
  watchedDirs(): string[] {
    return [...this.watchers.keys()];
  }

  private async stamped(entry: ConfigEntry, named: Set<string>): Promise<ConfigEntry> {
    const plugin = isPlainObject(entry.value) ? entry.value['plugin'] : undefined;
    if (
      entry.type !== 'tool-service' ||
      !isPlainObject(plugin) ||
      plugin['kind'] !== 'module' ||
      typeof plugin['module'] !== 'string' ||
      plugin['module'].startsWith('builtin:')
    )
      return entry;
    const file = await moduleFile(plugin['module'], this.configDir).catch(() => undefined);
    if (!file) return entry;
    const dir = dirname(file);
    named.add(dir);
    this.watchDir(dir);
    return { ...entry, value: { ...(entry.value as Record<string, unknown>), plugin: { ...plugin, revision: watchRevision(this.revisions.get(dir) ?? 0) } } };
  }

  /** Stop watching directories no module names any longer; one named again is imported afresh (it may have changed unseen). */
  private unwatchAllBut(named: ReadonlySet<string>): void {
    for (const [dir, w] of this.watchers) {
      if (named.has(dir)) continue;
      w.close();
      this.watchers.delete(dir);
      this.revisions.set(dir, (this.revisions.get(dir) ?? 0) + 1);
    }
  }

  private watchDir(dir: string): void {
    if (this.watchers.has(dir)) return;
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        this.revisions.set(dir, (this.revisions.get(dir) ?? 0) + 1);
        this.log.info({ dir, file: name }, 'module changed; importing it again');
        this.changed?.();
      });
      w.on('error', (err) => {
        this.log.warn({ err, dir }, 'cannot watch the module directory any longer');
        w.close();
        this.watchers.delete(dir);
      });
      this.watchers.set(dir, w);
    } catch (err) {
      this.log.warn({ err, dir }, 'cannot watch the module directory; changes to it will not be seen');
    }
  }

  async close(): Promise<void> {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    await this.inner.close();
  }
}
