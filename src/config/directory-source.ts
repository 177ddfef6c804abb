import { watch, type FSWatcher } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DESCRIPTOR_TYPES, fingerprint, type ConfigSnapshot, type ConfigSource } from './config-source.js';
import { DirectoryConfigStore } from './directory-store.js';

/**
 * A descriptor directory, watched. inotify watches the directory and each type directory it
 * resolves to; a Kubernetes ConfigMap mount swaps its `..data` symlink instead of writing
 * files, which shows as an event on the directory itself, after which the type directories
 * are watched again at their new places. A slow poll catches what events miss (network
 * filesystems, a directory made after start).
 */
export class DirectorySource implements ConfigSource {
  readonly description: string;
  private readonly store: DirectoryConfigStore;
  private readonly watchers = new Map<string, { real: string; watcher: FSWatcher }>();
  private poll: NodeJS.Timeout | undefined;
  private changed: (() => void) | undefined;
  private closed = false;
  /**
   * The files the watch named since the last read (`<type>/<file>`), which the next read
   * looks at alone; `all` when it must look at every file: the first read, a poll, an event
   * on the directory itself or one without a name, a type directory watched anew.
   */
  private named: Set<string> | 'all' = 'all';

  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly pollMs = 2000,
  ) {
    this.store = new DirectoryConfigStore(dir);
    this.description = `directory ${dir}`;
  }

  async read(signal?: AbortSignal): Promise<ConfigSnapshot> {
    const named = this.named;
    this.named = new Set();
    try {
      const entries = named === 'all' ? await this.store.entries(DESCRIPTOR_TYPES, signal) : await this.store.refresh(named, DESCRIPTOR_TYPES, signal);
      return { version: fingerprint(entries), entries };
    } catch (err) {
      this.named = 'all';
      throw err;
    }
  }

  /** Note what an event names for the next read. */
  private note(type: string | undefined, file: string | null): void {
    if (type === undefined || file === null || this.named === 'all') this.named = 'all';
    else this.named.add(`${type}/${file}`);
  }

  async watch(changed: () => void): Promise<void> {
    this.changed = changed;
    await this.arm();
    if (this.pollMs > 0) {
      this.poll = setInterval(() => void this.pollOnce(), this.pollMs);
      this.poll.unref();
    }
  }

  /** One poll: re-arm, then tell the listener. Never rejects: a timer's promise has nobody to catch it. */
  private async pollOnce(): Promise<void> {
    this.named = 'all';
    try {
      await this.arm();
    } catch (err) {
      this.log.warn({ err }, 're-arming watches failed; the next poll tries again');
    }
    this.notify();
  }

  /** Tell the listener; called from a timer or a watcher's event, where a throw would end the process. */
  private notify(): void {
    try {
      this.changed?.();
    } catch (err) {
      this.log.warn({ err }, 'config change listener failed');
    }
  }

  /** Watch the directory and the type directories where they are now. */
  private async arm(): Promise<void> {
    for (const [path, type] of [[this.dir, undefined] as const, ...DESCRIPTOR_TYPES.map((t) => [join(this.dir, t), t] as const)]) {
      const real = await realpath(path).catch(() => undefined);
      if (this.closed) return;
      const current = this.watchers.get(path);
      if (current?.real === real) continue;
      current?.watcher.close();
      this.watchers.delete(path);
      // What happened while it was not watched there is known to no event.
      this.named = 'all';
      if (!real) continue;
      try {
        const watcher = watch(real, { persistent: false, encoding: 'utf8' }, (_event, file) => this.onEvent(type, file));
        watcher.on('error', () => {
          watcher.close();
          this.named = 'all';
          if (this.watchers.get(path)?.watcher === watcher) this.watchers.delete(path);
        });
        this.watchers.set(path, { real, watcher });
      } catch (err) {
        this.log.debug({ err, path }, 'cannot watch; the poll covers it');
      }
    }
  }

  private onEvent(type: string | undefined, file: string | null): void {
    this.note(type, file);
    this.notify();
    // A swapped symlink moves the type directories: watch them where they are now.
    void this.arm().catch((err: unknown) => this.log.debug({ err }, 're-arming watches failed'));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.poll);
    for (const { watcher } of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }
}
