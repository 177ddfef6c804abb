import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { fingerprint, type ConfigSnapshot, type ConfigSource } from '../../config/config-source.js';
import type { ConfigEntry } from '../../config/config-store.js';
import { isPlainObject } from '../../plain-object.js';
import { moduleFile } from './module-plugin.js';
import { watchRevision } from './module-revision.js';

/** How long a directory must be quiet before its changes are read: one save makes several events (a write, a rename, a temp file). */
const SETTLE_MS = 40;

/** What editors write beside a file while saving it (vim's swap and probe files, backups, emacs's locks, JetBrains' safe write). */
const EDITOR_TEMP = [/\.sw[a-px]$/, /~$/, /^\.#/, /^#.*#$/, /^4913$/, /___jb_(tmp|old)___$/];

export function isEditorTemp(name: string): boolean {
  return EDITOR_TEMP.some((pattern) => pattern.test(name));
}

/**
 * `toolwire run --watch` (on a config directory only: the watched directories are the
 * operator's): the descriptors of `inner`, with each module service's `plugin.revision` set
 * (see watchRevision) to how often its module has changed. A saved change thus reads as a
 * changed service, and goes the way every live change goes: the catalog is built and
 * checked whole (the changed module imported afresh), the service's plugin is swapped while
 * calls in flight finish on the old one, and a module that does not import (a syntax error)
 * is refused, logged with where it is, while the last good code serves.
 *
 * The directory holding each module is watched (not below it: a project's node_modules
 * would cost a watch per file) while a descriptor names the module. A save of a module file
 * changes that module's revision only; another file of the directory (a helper) changes
 * those of all the directory's modules, which may import it. The events of one save are read
 * as one change, and editors' temporary files are not changes. A development aid: each
 * revision's own files stay loaded (see importModuleFile).
 */
export class ModuleWatchSource implements ConfigSource {
  readonly description: string;
  private readonly watchers = new Map<string, FSWatcher>();
  /** The module files each watched directory holds, as the last read named them. */
  private modules = new Map<string, Set<string>>();
  private readonly revisions = new Map<string, number>();
  /** Names changed in each directory since the last settled change. */
  private readonly pending = new Map<string, Set<string>>();
  private settleTimer: NodeJS.Timeout | undefined;
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
    const named = new Map<string, Set<string>>();
    for (const e of snap.entries) entries.push(await this.stamped(e, named));
    this.unwatchAllBut(named);
    this.modules = named;
    return { version: `${snap.version}.${fingerprint(entries)}`, entries };
  }

  /** The directories watched now: those of the modules the last read named. */
  watchedDirs(): string[] {
    return [...this.watchers.keys()];
  }

  private async stamped(entry: ConfigEntry, named: Map<string, Set<string>>): Promise<ConfigEntry> {
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
    named.set(dir, (named.get(dir) ?? new Set()).add(file));
    this.watchDir(dir);
    return { ...entry, value: { ...(entry.value as Record<string, unknown>), plugin: { ...plugin, revision: watchRevision(this.revisions.get(file) ?? 0) } } };
  }

  /** Stop watching directories no module names any longer; a module named again is imported afresh (it may have changed unseen). */
  private unwatchAllBut(named: ReadonlyMap<string, ReadonlySet<string>>): void {
    for (const [dir, files] of this.modules) {
      for (const file of files) if (!named.get(dir)?.has(file)) this.bump(file);
    }
    for (const [dir, w] of this.watchers) {
      if (named.has(dir)) continue;
      w.close();
      this.watchers.delete(dir);
    }
  }

  private bump(file: string): void {
    this.revisions.set(file, (this.revisions.get(file) ?? 0) + 1);
  }

  private watchDir(dir: string): void {
    if (this.watchers.has(dir)) return;
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => this.seen(dir, name));
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

  /** One event; the change is read once the directories are quiet for SETTLE_MS. A name unknown (some platforms) counts as a helper. */
  private seen(dir: string, name: string | null): void {
    if (name !== null && isEditorTemp(basename(name))) return;
    this.pending.set(dir, (this.pending.get(dir) ?? new Set()).add(name ?? ''));
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.settled(), SETTLE_MS);
    this.settleTimer.unref();
  }

  private settled(): void {
    this.settleTimer = undefined;
    const files: string[] = [];
    const reloaded: string[] = [];
    for (const [dir, names] of this.pending) {
      const modules = this.modules.get(dir) ?? new Set<string>();
      for (const name of names) {
        const file = join(dir, name);
        files.push(file);
        // A module file is its own module's; anything else may be imported by any module beside it.
        for (const module of modules.has(file) ? [file] : modules) if (!reloaded.includes(module)) reloaded.push(module);
      }
    }
    this.pending.clear();
    for (const module of reloaded) this.bump(module);
    this.log.info({ files, modules: reloaded }, 'module changed; importing it again');
    this.changed?.();
  }

  async close(): Promise<void> {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
    await this.inner.close();
  }
}
