import type { Logger } from 'pino';
import { Catalog } from '../catalog/catalog.js';
import { AbortedError, ConfigError, errorMessage } from '../errors.js';
import { Backoff, sleep } from '../transport/backoff.js';
import type { ConfigEntry } from './config-store.js';
import { fingerprint, type ConfigSource } from './config-source.js';

/** A version that was read and not applied, and why. */
export interface Refusal {
  readonly version: string;
  readonly at: string;
  /** Problems of an invalid catalog, each with its file or key and field; or the one error of a failed apply. */
  readonly problems: readonly string[];
}

export interface ConfigStatus {
  readonly source: string;
  /** The version being served; undefined until a valid catalog has been read. */
  readonly version: string | undefined;
  readonly appliedAt: string | undefined;
  /** The newest version read, when it is not the one served. */
  readonly rejected: Refusal | undefined;
  readonly reloads: { readonly applied: number; readonly rejected: number; readonly failed: number };
}

export interface ConfigFollowerDeps {
  readonly source: ConfigSource;
  /** Validate entries into a catalog (the checks of `toolwire validate`); throws ConfigError. */
  readonly build: (entries: readonly ConfigEntry[]) => Promise<Catalog>;
  readonly log: Logger;
  /** Changes closer together than this are read once. Default 50 ms. */
  readonly settleMs?: number;
}

/**
 * Keeps a worker's catalog in step with its config source. Every change is read whole and
 * validated first; a valid one is handed to `apply`, an invalid one is refused and the last
 * good catalog stays. Changes that come while one is read or applied are read once after.
 */
export class ConfigFollower {
  private apply: ((catalog: Catalog) => Promise<void>) | undefined;
  private appliedPrint: string | undefined;
  private refusedPrint: string | undefined;
  private version: string | undefined;
  private appliedAt: string | undefined;
  private rejected: Refusal | undefined;
  private readonly reloads = { applied: 0, rejected: 0, failed: 0 };
  private dirty = false;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly closing = new AbortController();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly deps: ConfigFollowerDeps) {}

  status(): ConfigStatus {
    return { source: this.deps.source.description, version: this.version, appliedAt: this.appliedAt, rejected: this.rejected, reloads: { ...this.reloads } };
  }

  /**
   * Start watching, then read and validate the first catalog, retrying a source that does
   * not answer until `signal` aborts. An invalid first catalog throws ConfigError, unless
   * `serveEmpty`: then it is refused like a later one and an empty catalog is served until a
   * valid one comes.
   */
  async start(options: { readonly serveEmpty: boolean; readonly signal?: AbortSignal }): Promise<Catalog> {
    const { source, log } = this.deps;
    await source.watch(() => this.schedule(), options.signal);
    const backoff = new Backoff({ initialDelayMs: 500, maxDelayMs: 10_000 });
    for (;;) {
      try {
        const snap = await source.read(options.signal);
        const print = fingerprint(snap.entries);
        try {
          const catalog = await this.deps.build(snap.entries);
          this.applied(snap.version, print);
          return catalog;
        } catch (err) {
          if (!(err instanceof ConfigError) || !options.serveEmpty) throw err;
          this.refuse(snap.version, print, err.problems);
          return new Catalog([], []);
        }
      } catch (err) {
        if (err instanceof ConfigError || options.signal?.aborted) throw err;
        const delay = backoff.next();
        log.warn({ err: errorMessage(err), source: source.description, retryInMs: delay }, 'cannot read the config; retrying');
        await sleep(delay, options.signal);
      }
    }
  }

  /** Calls `listener` after each change applied (not the first catalog); returns how to stop. */
  onApplied(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** From now on, hand every valid change to `apply`. */
  follow(apply: (catalog: Catalog) => Promise<void>): void {
    this.apply = apply;
    if (this.dirty) this.schedule();
  }

  private schedule(): void {
    this.dirty = true;
    if (!this.apply || this.running || this.timer || this.closing.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.drain().finally(() => {
        this.running = undefined;
        if (this.dirty) this.schedule();
      });
    }, this.deps.settleMs ?? 50);
  }

  private async drain(): Promise<void> {
    while (this.dirty && !this.closing.signal.aborted) {
      this.dirty = false;
      await this.reload().catch((err: unknown) => {
        if (!(err instanceof AbortedError)) this.deps.log.error({ err }, 'config reload failed');
      });
    }
  }

  private async reload(): Promise<void> {
    const { source, log } = this.deps;
    const snap = await source.read(this.closing.signal);
    const print = fingerprint(snap.entries);
    if (print === this.appliedPrint) {
      // Another type or workspace moved the version, or a refused change was taken back:
      // what is served is what the source holds.
      this.version = snap.version;
      this.rejected = undefined;
      this.refusedPrint = undefined;
      return;
    }
    if (print === this.refusedPrint) return;
    let catalog: Catalog;
    try {
      catalog = await this.deps.build(snap.entries);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.refuse(snap.version, print, err.problems);
      return;
    }
    try {
      await this.apply!(catalog);
    } catch (err) {
      this.reloads.failed++;
      this.rejected = { version: snap.version, at: new Date().toISOString(), problems: [`could not be applied: ${errorMessage(err)}`] };
      log.error({ err, version: snap.version }, 'config change could not be applied; the last good one keeps serving');
      return;
    }
    this.applied(snap.version, print);
    log.info({ version: snap.version, services: catalog.services.size, tools: catalog.tools.size }, 'config change applied');
    for (const l of this.listeners) l();
  }

  private applied(version: string, print: string): void {
    this.version = version;
    this.appliedPrint = print;
    this.appliedAt = new Date().toISOString();
    this.rejected = undefined;
    this.refusedPrint = undefined;
    this.reloads.applied++;
  }

  /** Each refused version is logged once, problem by problem. */
  private refuse(version: string, print: string, problems: readonly string[]): void {
    this.reloads.rejected++;
    this.refusedPrint = print;
    this.rejected = { version, at: new Date().toISOString(), problems };
    this.deps.log.warn({ version, problems, serving: this.version ?? 'nothing' }, `config version ${version} refused: ${problems.length} problem(s); the last good catalog keeps serving`);
  }

  /** Stop reloading; a reload under way is let finish. */
  async close(): Promise<void> {
    this.closing.abort();
    clearTimeout(this.timer);
    await this.running;
    await this.deps.source.close();
  }
}
