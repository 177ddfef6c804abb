import { setMaxListeners } from 'node:events';
import { Slots } from '../async/slots.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import type { Plugin } from '../plugins/plugin.js';
import type { IncomingMessage } from '../transport/transport.js';
import { CancelListener } from './cancel-listener.js';
import { DEFAULT_LIMITS, type WorkerLimits } from './limits.js';
import type { CallResult } from './interceptor.js';
import { Outcome } from './outcome.js';
import { sameService, ServiceConsumer, type ConsumerDeps } from './service-consumer.js';
import type { ServiceInstance } from './service-instance.js';
import type { WorkerOptions } from './worker-options.js';
import { WorkerState, type WorkerStats } from './worker-state.js';

export { WorkerState, type WorkerStats } from './worker-state.js';
export type { WorkerEvents, WorkerOptions } from './worker-options.js';

/** What a reload changed, by service id. */
export interface CatalogChange {
  readonly added: string[];
  readonly replaced: string[];
  readonly removed: string[];
}

/**
 * Consumes every served service's request queue (a ServiceConsumer each) and answers through
 * its plugin, with in-flight work bounded globally and per service. apply() swaps in a new
 * catalog while running; stop() stops intake, lets in-flight requests finish within the
 * grace period, and nacks what is left.
 */
export class Worker {
  private readonly limits: WorkerLimits;
  /** The worker-wide bound on requests running at once, shared by every service in arrival order. */
  private readonly global: Slots;
  private readonly hardStop = new AbortController();
  private readonly consumers = new Map<string, ServiceConsumer>();
  /** The plugins create() made for the first catalog, until start() binds them. */
  private readonly prepared = new Map<string, Plugin>();
  /** Instances and consumers a reload took out of service, until what they hold is settled. */
  private readonly retiring = new Set<Promise<void>>();
  /**
   * Requests taken and not yet settled. A count, not a set of their promises: a set's add and
   * delete cost about 100 ns a request (docs/benchmarks-rationale.md), and drain() only waits for none.
   */
  private inFlight = 0;
  /** drain(), waiting for the last request in flight to settle. */
  private allSettled: (() => void) | undefined;
  private catalog: Catalog;
  private stopping: Promise<void> | undefined;
  private readonly counts = { received: 0, answered: 0, failed: 0, nacked: 0, deadLettered: 0, duplicates: 0, shed: 0 };
  private readonly deps: ConsumerDeps;
  private applying = false;
  #state: WorkerState = WorkerState.Idle;

  /**
   * A worker with the plugins of its first catalog made, taking nothing yet (start() does).
   * The composition root opens its HTTP port in between. If a plugin cannot be made, those
   * made are closed and the error is thrown.
   */
  static async create(options: WorkerOptions): Promise<Worker> {
    const worker = new Worker(options);
    try {
      for (const service of options.catalog.services.values()) {
        const plugin = await options.createPlugin(service);
        if (plugin) worker.prepared.set(service.id, plugin);
      }
    } catch (err) {
      await worker.stop();
      throw err;
    }
    return worker;
  }

  private constructor(private readonly options: WorkerOptions) {
    const { transport, log } = options;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    // Each service's handler listens on hardStop: more than Node's default of 10 services is
    // normal, not a leak.
    setMaxListeners(0, this.hardStop.signal);
    this.global = new Slots(this.limits.concurrency);
    this.catalog = options.catalog;
    this.deps = {
      transport,
      limits: this.limits,
      log,
      hardStop: this.hardStop.signal,
      counts: this.counts,
      catalog: () => this.catalog,
      interceptors: options.interceptors,
      cancels: new CancelListener(transport, log),
      dispatch: (inst, msg, done, receivedAt, startedAt) => this.dispatch(inst, msg, done, receivedAt, startedAt),
      refuse: (inst, msg, err) => {
        // A retired service's series are gone: its last refusals are not worth making them again.
        if (this.catalog.services.has(inst.service.id)) options.events?.shed?.(inst.service.id);
        this.track(inst, inst.handler.refuse(msg, err));
      },
    };
  }

  /** idle -> running -> draining -> stopped; failed when start() did not complete. */
  get state(): WorkerState {
    return this.#state;
  }

  stats(): WorkerStats {
    const queued = [...this.consumers.values()].reduce((sum, c) => sum + c.queued, 0);
    return { state: this.#state, inFlight: this.inFlight, queued, ...this.counts };
  }

  /** Per service: requests being handled and requests waiting in its backlog (for the metrics' gauges). */
  load(): { service: string; inFlight: number; queued: number }[] {
    return [...this.consumers.values()].map((c) => ({ service: c.current.service.id, inFlight: c.current.inFlight, queued: c.queued }));
  }

  /** Services with calls past their timeout still running in the plugin; `blocked` at the limit. */
  abandoned(): { service: string; abandoned: number; blocked: boolean }[] {
    return [...this.consumers.values()]
      .map(({ current: { service, handler } }) => ({ service: service.id, abandoned: handler.abandoned, blocked: handler.blocked }))
      .filter((s) => s.abandoned > 0);
  }

  served(): ToolService[] {
    return [...this.consumers.values()].map((c) => c.current.service);
  }

  /** The plugin serving a service now, for a catalog check that may ask it rather than start another backend. */
  pluginOf(serviceId: string): Plugin | undefined {
    return this.consumers.get(serviceId)?.current.plugin;
  }

  /** The catalog new requests resolve against. */
  current(): Catalog {
    return this.catalog;
  }

  /** Aborted when the shutdown grace period is over (what every running call listens to, through its service). */
  get hardStopSignal(): AbortSignal {
    return this.hardStop.signal;
  }

  /** Consume the request queue of each service create() made a plugin for. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.#state !== WorkerState.Idle) throw new Error(`worker cannot start from state ${this.#state}`);
    try {
      const opening: [ToolService, Plugin][] = [];
      for (const service of this.catalog.services.values()) {
        const plugin = this.prepared.get(service.id);
        if (!plugin) {
          this.options.log.info({ service: service.id }, 'service has no plugin here; not consumed');
          continue;
        }
        // The consumers own the plugins from here, and close them if they cannot open.
        this.prepared.delete(service.id);
        opening.push([service, plugin]);
      }
      for (const c of await ServiceConsumer.openAll(opening, this.deps, signal)) this.consumers.set(c.current.service.id, c);
      this.#state = WorkerState.Running;
    } catch (err) {
      this.#state = WorkerState.Failed;
      await this.deps.cancels.close();
      for (const c of this.consumers.values()) await c.close(false);
      this.consumers.clear();
      await this.closePrepared();
      throw err;
    }
  }

  /**
   * Serve `next` from now on. New services start consuming. A changed service gets a new
   * instance: on the same subscription when it is still consumed where it was (nothing is
   * closed, so nothing in transit to it is lost), else on a new one opened before the old
   * stops taking. Removed and replaced instances finish what they hold in the background,
   * then let go. Tools swap at once for new requests; no request in flight is cut short. If
   * a plugin or a subscription cannot be made, nothing changes and the error is thrown.
   */
  async apply(next: Catalog, signal?: AbortSignal): Promise<CatalogChange> {
    if (this.#state !== WorkerState.Running) throw new Error(`worker cannot reload in state ${this.#state}`);
    if (this.applying) throw new Error('worker is already reloading');
    this.applying = true;
    // A cancel subscription this reload is about to need must not be closed under it.
    const release = this.deps.cancels.hold();
    try {
      return await this.applyCatalog(next, signal);
    } finally {
      this.applying = false;
      release();
    }
  }

  private async applyCatalog(next: Catalog, signal?: AbortSignal): Promise<CatalogChange> {
    const { log, events, createPlugin } = this.options;
    const added: string[] = [];
    const replaced: string[] = [];
    const removed = [...this.consumers.keys()].filter((id) => !next.services.has(id));
    const fresh = new Map<string, ServiceConsumer>();
    const swaps = new Map<string, { service: ToolService; plugin: Plugin }>();
    try {
      for (const service of next.services.values()) {
        const old = this.consumers.get(service.id);
        if (old && sameService(old.current.service, service)) continue;
        const plugin = await createPlugin(service);
        if (!plugin) {
          if (old) removed.push(service.id);
          continue;
        }
        (old ? replaced : added).push(service.id);
        if (old?.consumesLike(service)) {
          swaps.set(service.id, { service, plugin });
          continue;
        }
        fresh.set(service.id, await ServiceConsumer.open(service, plugin, this.deps, signal));
      }
    } catch (err) {
      for (const c of fresh.values()) await c.close(true);
      for (const { plugin } of swaps.values()) await plugin.close?.().catch(() => undefined);
      throw err;
    }
    this.catalog = next;
    for (const [id, { service, plugin }] of swaps) this.runRetirement(this.consumers.get(id)!.swap(service, plugin));
    for (const id of removed) this.runRetirement(this.consumers.get(id)!.retire());
    for (const id of removed) this.consumers.delete(id);
    for (const [id, c] of fresh) {
      // Moved to another topic or subscription: nobody will read the old one again.
      const old = this.consumers.get(id);
      if (old) this.runRetirement(old.retire());
      this.consumers.set(id, c);
    }
    events?.applied?.(next);
    if (added.length + replaced.length + removed.length > 0) log.info({ added, replaced, removed }, 'services changed');
    return { added, replaced, removed };
  }

  /** Let a retirement run on its own; stop() waits for it. */
  private runRetirement(work: Promise<void>): void {
    const task: Promise<void> = work.finally(() => this.retiring.delete(task));
    this.retiring.add(task);
  }

  /** Close the plugins create() made that no consumer took. */
  private async closePrepared(): Promise<void> {
    for (const [id, plugin] of this.prepared)
      await plugin.close?.().catch((err: unknown) => this.options.log.warn({ err, service: id }, 'plugin close failed'));
    this.prepared.clear();
  }

  /**
   * Run a request under the global bound. It is tracked from now, whether it starts at once
   * (a free slot: the usual case, and no promise is made for the wait) or waits for a slot,
   * so that drain() finds the waiting ones too.
   */
  private dispatch(inst: ServiceInstance, msg: IncomingMessage, done: () => void, receivedAt: number, startedAt: number): void {
    const work = this.global.tryAcquire()
      ? this.run(inst, msg, receivedAt, startedAt)
      : new Promise<CallResult>((resolve) => this.global.acquire(() => resolve(this.run(inst, msg, receivedAt, performance.now()))));
    this.track(inst, work, done, this.global);
  }

  /** The handler's promise; a throw as it is called becomes a rejection, tracked like any other. */
  private run(inst: ServiceInstance, msg: IncomingMessage, receivedAt: number, startedAt: number): Promise<CallResult> {
    try {
      return inst.handler.handle(msg, receivedAt, startedAt);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Count a request's outcome and keep it in flight (for drain, and its instance's retirement)
   * until it settles; then give back its global slot, if it holds one, and call `done`.
   */
  private track(inst: ServiceInstance, work: Promise<CallResult | Outcome>, done?: () => void, slot?: Slots): void {
    // One reaction for both ends, not then/catch/finally: three promises a request on the hot path.
    const settled = (): void => {
      if (--this.inFlight === 0) this.allSettled?.();
      inst.leave();
      slot?.release();
      done?.();
    };
    void work.then(
      (result) => {
        // A handled request's result, or a refusal's outcome.
        this.count(typeof result === 'string' ? result : result.outcome);
        settled();
      },
      (err: unknown) => {
        this.options.log.error({ err }, 'request handler failed');
        settled();
      },
    );
    this.inFlight++;
    inst.enter();
  }

  private count(outcome: Outcome): void {
    if (outcome === Outcome.Answered) this.counts.answered++;
    else if (outcome === Outcome.Failed) this.counts.failed++;
    else if (outcome === Outcome.Nacked) this.counts.nacked++;
    else if (outcome === Outcome.Duplicate) this.counts.duplicates++;
    else this.counts.deadLettered++;
  }

  /**
   * Idempotent. Resolves when every taken request is settled and subscriptions and plugins are
   * closed. A worker that never ran took nothing: its plugins are closed at once.
   */
  stop(graceMs = this.limits.shutdownGraceMs): Promise<void> {
    this.stopping ??= this.#state === WorkerState.Running ? this.drain(graceMs) : this.discard();
    return this.stopping;
  }

  private async discard(): Promise<void> {
    await this.closePrepared();
    this.#state = WorkerState.Stopped;
  }

  private async drain(graceMs: number): Promise<void> {
    const { log } = this.options;
    this.#state = WorkerState.Draining;
    log.info({ inFlight: this.inFlight, graceMs }, 'draining');
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
    const consumers = [...this.consumers.values()];
    await Promise.all(consumers.map((c) => c.stopTaking()));
    // Loops of persistent topics leave at once; those of non-persistent ones once their
    // backlog has started. Requests keep joining inFlight until then. Instances a reload
    // retired get the same grace.
    const all = (async () => {
      await Promise.all(consumers.map((c) => c.done));
      while (this.inFlight > 0) await new Promise<void>((resolve) => (this.allSettled = resolve));
      this.allSettled = undefined;
      return 'done' as const;
    })();
    if ((await Promise.race([all, graceOver])) === 'timeout') {
      log.warn({ inFlight: this.inFlight }, 'grace period over; aborting in-flight requests');
      this.hardStop.abort();
      await all;
    }
    clearTimeout(timer);
    await Promise.all([...this.retiring]);
    await this.deps.cancels.close();
    for (const c of consumers) await c.close(false);
    this.#state = WorkerState.Stopped;
    log.info(this.stats(), 'stopped');
  }
}
