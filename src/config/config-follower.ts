import type { Logger } from 'pino';
import { Catalog } from '../catalog/catalog.js';
import { AbortedError, ConfigError, errorMessage, isRetriable } from '../errors.js';
import { Backoff, type BackoffOptions } from '../async/backoff.js';
import { sleep } from '../async/sleep.js';
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
  /**
   * Validate entries into a catalog (the checks of `toolwire validate`); throws ConfigError.
   * `previous` is the catalog served now (none before the first), whose unchanged services
   * need no second check.
   */
  readonly build: (entries: readonly ConfigEntry[], previous: Catalog | undefined) => Promise<Catalog>;
  readonly log: Logger;
  /** Changes closer together than this are read once. Default 50 ms. */
  readonly settleMs?: number;
  /** Delays between attempts to read again after a failed read; default 500 ms growing to 10 s. */
  readonly retry?: BackoffOptions;
  /**
   * Delays between attempts to apply a valid change that could not be applied (the broker
   * refused a subscription: a permission not granted yet); default 2 s growing to 60 s.
   */
  readonly applyRetry?: BackoffOptions;
}

/**
 * Keeps a worker's catalog in step with its config source. Every change is read whole and
 * validated first; a valid one is handed to `apply`, an invalid one is refused and the last
 * good catalog stays. Changes that come while one is read or applied are read once after.
 */
export class ConfigFollower {
  private apply: ((catalog: Catalog) => Promise<void>) | undefined;
  private appliedPrint: string | undefined;
  private served: Catalog | undefined;
  private refusedPrint: string | undefined;
  private version: string | undefined;
  private appliedAt: string | undefined;
  private rejected: Refusal | undefined;
  private readonly reloads = { applied: 0, rejected: 0, failed: 0 };
  private dirty = false;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** A read that failed is tried again after a backoff, until one succeeds. */
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly retryBackoff: Backoff;
  /** When reads began to fail; undefined while they succeed. */
  private failingSince: number | undefined;
  /** A valid change whose apply failed: tried again on its own backoff, not at every read. */
  private failedApply: { readonly print: string; readonly since: number; attempts: number; retryAt: number } | undefined;
  private applyTimer: NodeJS.Timeout | undefined;
  private readonly applyBackoff: Backoff;
  private readonly closing = new AbortController();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly deps: ConfigFollowerDeps) {
    this.retryBackoff = new Backoff(deps.retry ?? { initialDelayMs: 500, maxDelayMs: 10_000 });
    this.applyBackoff = new Backoff(deps.applyRetry ?? { initialDelayMs: 2_000, maxDelayMs: 60_000 });
  }

  status(): ConfigStatus {
    return { source: this.deps.source.description, version: this.version, appliedAt: this.appliedAt, rejected: this.rejected, reloads: { ...this.reloads } };
  }

  /**
   * Start watching, then read and validate the first catalog, retrying a source that does
   * not answer until `signal` aborts. An invalid first catalog throws ConfigError, unless
   * `serveEmpty`: then it is refused like a later one and an empty catalog is served until a
   * valid one comes. A build fault that is not retriable (a bug in a check) is thrown.
   */
  async start(options: { readonly serveEmpty: boolean; readonly signal?: AbortSignal }): Promise<Catalog> {
    const { source, log } = this.deps;
    await source.watch(() => this.schedule(), options.signal);
    const backoff = new Backoff({ initialDelayMs: 500, maxDelayMs: 10_000 });
    for (;;) {
      let building = false;
      try {
        const snap = await source.read(options.signal);
        const print = fingerprint(snap.entries);
        building = true;
        try {
          const catalog = await this.deps.build(snap.entries, undefined);
          this.applied(snap.version, print, catalog);
          return catalog;
        } catch (err) {
          if (!(err instanceof ConfigError) || !options.serveEmpty) throw err;
          this.refuse(snap.version, print, err.problems);
          return new Catalog([], []);
        }
      } catch (err) {
        // A fault of the build itself (a TypeError in a check) would fail the same way again.
        if (err instanceof ConfigError || options.signal?.aborted || (building && !isRetriable(err))) throw err;
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
      try {
        await this.reload();
        this.readAgain();
      } catch (err) {
        if (!(err instanceof AbortedError)) this.readFailed(err);
        return;
      }
    }
  }

  /** A source away (a broker outage) is said once, and its return once, not at every retry. */
  private readFailed(err: unknown): void {
    const delay = this.retryBackoff.next();
    if (this.failingSince === undefined) {
      this.failingSince = Date.now();
      this.deps.log.warn(
        { err: errorMessage(err), source: this.deps.source.description },
        'cannot read the config; retrying, the last good catalog keeps serving',
      );
    } else {
      this.deps.log.debug({ err: errorMessage(err), retryInMs: delay }, 'config read failed again');
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.schedule(), delay);
    this.retryTimer.unref();
  }

  private readAgain(): void {
    // This read is the one the timer would have made.
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryBackoff.reset();
    if (this.failingSince === undefined) return;
    this.deps.log.info({ failedMs: Date.now() - this.failingSince, version: this.version }, 'config read again');
    this.failingSince = undefined;
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
      if (this.failedApply !== undefined) this.deps.log.info({ version: snap.version }, 'the change that could not be applied was taken back');
      this.clearFailedApply();
      return;
    }
    if (print === this.refusedPrint) return;
    // The same change failed to apply and its backoff has not run out: a read in between (a
    // poll, a push for another type) does not try it again.
    if (print === this.failedApply?.print && Date.now() < this.failedApply.retryAt) return;
    let catalog: Catalog;
    try {
      catalog = await this.deps.build(snap.entries, this.served);
    } catch (err) {
      if (err instanceof ConfigError) return this.refuse(snap.version, print, err.problems);
      // Retriable: read again. Anything else is a fault of the build (a TypeError in a check)
      // that would fail the same way again: said once, and this version is not built again.
      if (isRetriable(err) || err instanceof AbortedError) throw err;
      this.reloads.failed++;
      this.refusedPrint = print;
      this.rejected = { version: snap.version, at: new Date().toISOString(), problems: [`could not be checked: ${errorMessage(err)}`] };
      log.error({ err, version: snap.version }, 'config change could not be checked; the last good one keeps serving');
      return;
    }
    try {
      await this.apply!(catalog);
    } catch (err) {
      this.applyFailed(snap.version, print, err);
      return;
    }
    if (this.failedApply !== undefined) {
      log.info(
        { version: snap.version, attempts: this.failedApply.attempts + 1, failedMs: Date.now() - this.failedApply.since },
        'config change applied after failed attempts',
      );
    }
    this.clearFailedApply();
    this.applied(snap.version, print, catalog);
    log.info({ version: snap.version, services: catalog.services.size, tools: catalog.tools.size }, 'config change applied');
    for (const l of this.listeners) l();
  }

  /**
   * A valid change the worker could not apply (most often a subscription the broker refused:
   * the role lacks the permission). The last good catalog keeps serving; the change is tried
   * again on a backoff that grows to a minute, so a refusal is one error line and a retry now
   * and then, not a storm. It is said once when it starts failing and once when it applies.
   */
  private applyFailed(version: string, print: string, err: unknown): void {
    const { log } = this.deps;
    this.reloads.failed++;
    this.rejected = { version, at: new Date().toISOString(), problems: [`could not be applied: ${errorMessage(err)}`] };
    if (this.failedApply?.print !== print) {
      this.applyBackoff.reset();
      this.failedApply = { print, since: Date.now(), attempts: 0, retryAt: 0 };
    }
    const failing = this.failedApply;
    const delay = this.applyBackoff.next();
    failing.attempts++;
    failing.retryAt = Date.now() + delay;
    if (failing.attempts === 1)
      log.error({ err, version, retryInMs: delay }, 'config change could not be applied; the last good one keeps serving, trying again with a backoff');
    else log.debug({ err: errorMessage(err), version, attempts: failing.attempts, retryInMs: delay }, 'config change still cannot be applied');
    clearTimeout(this.applyTimer);
    this.applyTimer = setTimeout(() => this.schedule(), delay);
    this.applyTimer.unref();
  }

  private clearFailedApply(): void {
    clearTimeout(this.applyTimer);
    this.applyTimer = undefined;
    this.failedApply = undefined;
    this.applyBackoff.reset();
  }

  private applied(version: string, print: string, catalog: Catalog): void {
    this.served = catalog;
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
    this.deps.log.warn(
      { version, problems, serving: this.version ?? 'nothing' },
      `config version ${version} refused: ${problems.length} problem(s); the last good catalog keeps serving`,
    );
  }

  /** Stop reloading; a reload under way is let finish. */
  async close(): Promise<void> {
    this.closing.abort();
    clearTimeout(this.timer);
    clearTimeout(this.retryTimer);
    clearTimeout(this.applyTimer);
    await this.running;
    await this.deps.source.close();
  }
}
