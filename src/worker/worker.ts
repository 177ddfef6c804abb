import { privateSubscription } from '../transport/private-subscription.js';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { Slots } from '../async/slots.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import type { Plugin } from '../plugins/plugin.js';
import { cancelTopic } from '../transport/topic-name.js';
import type { IncomingMessage, Subscription, Transport } from '../transport/transport.js';
import { isPersistentTopic } from '../transport/topic-name.js';
import type { Binding, Instance } from './binding.js';
import { consumeAll, consumeTaking, type IntakeDeps } from './intake.js';
import { CANCEL_PROPERTY } from '../envelope/properties.js';
import { DEFAULT_LIMITS, defaultNonPersistentPrefetch, type WorkerLimits } from './limits.js';
import { Outcome } from './outcome.js';
import { RequestHandler } from './request-handler.js';
import type { Interceptor } from './interceptor.js';
import { loggingInterceptor } from './logging-interceptor.js';

export const WorkerState = {
  Idle: 'idle',
  Running: 'running',
  Draining: 'draining',
  Stopped: 'stopped',
  Failed: 'failed',
} as const;
export type WorkerState = (typeof WorkerState)[keyof typeof WorkerState];

export interface WorkerOptions {
  readonly transport: Transport;
  /** The first catalog served. */
  readonly catalog: Catalog;
  /**
   * Makes the plugin that serves a service here: for the first catalog, and for each service a
   * reload adds or changes. Undefined leaves the service to other workers. The worker owns
   * what it makes, and closes it once the service is retired or the worker stops.
   */
  readonly createPlugin: (service: ToolService) => Promise<Plugin | undefined>;
  readonly log: Logger;
  readonly limits?: Partial<WorkerLimits>;
  /**
   * The concerns around each service's requests, outermost first (tracing, metrics...): the
   * composition root's choice, as Temporal's WorkerOptions.interceptors. An undefined entry is
   * a concern that is off. The worker adds its own debug line innermost.
   */
  readonly interceptors?: (service: ToolService) => readonly (Interceptor | undefined)[];
  /** What the worker tells its host as it happens (the metrics count it). */
  readonly events?: WorkerEvents;
}

/** Events of the worker for its host; every listener optional, none may throw. */
export interface WorkerEvents {
  /** A request of a service still served was answered `unavailable` without running (a full backlog, a blocked service). */
  shed?(serviceId: string): void;
  /** A reload committed: `catalog` is served from now on. */
  applied?(catalog: Catalog): void;
}

export interface WorkerStats {
  state: WorkerState;
  inFlight: number;
  received: number;
  answered: number;
  failed: number;
  nacked: number;
  deadLettered: number;
  /** Redelivered copies of requests already answered, acked without running again. */
  duplicates: number;
  /** Requests of a non-persistent topic answered `unavailable` because the backlog was full. */
  shed: number;
  /** Requests of non-persistent topics taken off the broker and waiting for a slot. */
  queued: number;
}

/** What a reload changed, by service id. */
export interface CatalogChange {
  readonly added: string[];
  readonly replaced: string[];
  readonly removed: string[];
}

/**
 * A descriptor change that needs a new instance (topics, plugin, options...). Tools are read
 * through the catalog on each request, so a change of tools alone needs none.
 */
function sameService(left: ToolService, right: ToolService): boolean {
  return JSON.stringify(left.raw) === JSON.stringify(right.raw);
}

/**
 * Consumes every served service's request queue (Shared subscription) and answers through
 * its plugin, with in-flight work bounded globally and per service. apply() swaps in a new
 * catalog while running; stop() stops intake, lets in-flight requests finish within the
 * grace period, and nacks what is left.
 */
export class Worker {
  private readonly options: WorkerOptions;
  private readonly limits: WorkerLimits;
  /** The worker-wide bound on requests running at once, shared by every service in arrival order. */
  private readonly global: Slots;
  private readonly hardStop = new AbortController();
  private readonly bindings = new Map<string, Binding>();
  /** The plugins create() made for the first catalog, until start() binds them. */
  private readonly prepared = new Map<string, Plugin>();
  /** Instances and bindings a reload took out of service, until what they hold is settled. */
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
  private readonly intake: IntakeDeps;
  /** Per cancel topic (one per namespace of request topics), this worker's subscription to it. */
  private readonly cancels = new Map<string, Promise<Subscription | undefined>>();
  /** Every instance not yet disposed: the bindings' current ones and those a reload retired that still run calls. */
  private readonly instances = new Set<Instance>();
  /** True while apply() runs: a cancel subscription it is about to need must not be closed under it. */
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

  private constructor(options: WorkerOptions) {
    this.options = options;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    // Each service's handler listens on hardStop: more than Node's default of 10 services is
    // normal, not a leak.
    setMaxListeners(0, this.hardStop.signal);
    this.global = new Slots(this.limits.concurrency);
    this.catalog = options.catalog;
    this.intake = {
      limits: this.limits,
      log: options.log,
      hardStop: this.hardStop.signal,
      counts: this.counts,
      dispatch: (inst, msg, done, receivedAt, fresh) => this.dispatch(inst, msg, done, receivedAt, fresh),
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
    let queued = 0;
    for (const b of this.bindings.values()) queued += b.backlog?.size ?? 0;
    return { state: this.#state, inFlight: this.inFlight, queued, ...this.counts };
  }

  /** Per service: requests being handled and requests waiting in its backlog (for the metrics' gauges). */
  load(): { service: string; inFlight: number; queued: number }[] {
    return [...this.bindings.values()].map((binding) => ({
      service: binding.current.service.id,
      inFlight: binding.current.active,
      queued: binding.backlog?.size ?? 0,
    }));
  }

  /** Services with calls past their timeout still running in the plugin; `blocked` at the limit. */
  abandoned(): { service: string; abandoned: number; blocked: boolean }[] {
    const out: { service: string; abandoned: number; blocked: boolean }[] = [];
    for (const b of this.bindings.values()) {
      const h = b.current.handler;
      if (h.abandoned > 0) out.push({ service: b.current.service.id, abandoned: h.abandoned, blocked: h.blocked });
    }
    return out;
  }

  served(): ToolService[] {
    return [...this.bindings.values()].map((binding) => binding.current.service);
  }

  /** The plugin serving a service now, for a catalog check that may ask it rather than start another backend. */
  pluginOf(serviceId: string): Plugin | undefined {
    return this.bindings.get(serviceId)?.current.plugin;
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
    const { log } = this.options;
    try {
      for (const service of this.catalog.services.values()) {
        const plugin = this.prepared.get(service.id);
        if (!plugin) {
          log.info({ service: service.id }, 'service has no plugin here; not consumed');
          continue;
        }
        this.bindings.set(service.id, await this.bind(service, plugin, signal));
        this.prepared.delete(service.id);
      }
      this.#state = WorkerState.Running;
    } catch (err) {
      this.#state = WorkerState.Failed;
      for (const b of this.bindings.values()) await this.closeBinding(b, false);
      this.bindings.clear();
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
    try {
      return await this.applyCatalog(next, signal);
    } finally {
      this.applying = false;
      // Namespaces no service is consumed from any more: their cancel topics are read no more.
      this.pruneCancels();
    }
  }

  private async applyCatalog(next: Catalog, signal?: AbortSignal): Promise<CatalogChange> {
    const { log, events, createPlugin } = this.options;
    const added: string[] = [];
    const replaced: string[] = [];
    const removed = [...this.bindings.keys()].filter((id) => !next.services.has(id));
    const fresh = new Map<string, Binding>();
    const swaps = new Map<string, { service: ToolService; plugin: Plugin }>();
    try {
      for (const service of next.services.values()) {
        const old = this.bindings.get(service.id);
        if (old && sameService(old.current.service, service)) continue;
        const plugin = await createPlugin(service);
        if (!plugin) {
          if (old) removed.push(service.id);
          continue;
        }
        (old ? replaced : added).push(service.id);
        if (old && old.topic === service.requestQueue && old.name === service.subscription && old.prefetch === this.prefetch(service)) {
          swaps.set(service.id, { service, plugin });
          continue;
        }
        try {
          fresh.set(service.id, await this.bind(service, plugin, signal));
        } catch (err) {
          await plugin.close?.().catch(() => undefined);
          throw err;
        }
      }
    } catch (err) {
      for (const b of fresh.values()) await this.closeBinding(b, true);
      for (const { plugin } of swaps.values()) await plugin.close?.().catch(() => undefined);
      throw err;
    }
    this.catalog = next;
    for (const [id, { service, plugin }] of swaps) {
      const b = this.bindings.get(id)!;
      const old = b.current;
      b.current = this.instance(service, plugin, b.subscription.redeliverable);
      b.wake(); // its bound may have grown
      this.runRetirement(this.closeWhenIdle(old));
    }
    for (const id of removed) {
      const old = this.bindings.get(id)!;
      this.bindings.delete(id);
      this.runRetirement(this.retireBinding(old));
    }
    for (const [id, b] of fresh) {
      const old = this.bindings.get(id);
      // Moved to another topic or subscription: nobody will read the old one again.
      if (old) this.runRetirement(this.retireBinding(old));
      this.bindings.set(id, b);
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

  /** Persistent: a small prefetch leaves the rest with the broker for other workers. Non-persistent: the broker drops what finds no room, so take all it allows. */
  private prefetch(service: ToolService): number {
    const concurrency = service.concurrency ?? this.limits.serviceConcurrency;
    return isPersistentTopic(service.requestQueue)
      ? Math.min(1000, Math.max(concurrency, 1) * 2)
      : (this.limits.nonPersistentPrefetch ?? defaultNonPersistentPrefetch(this.options.transport.kind));
  }

  private instance(service: ToolService, plugin: Plugin, redeliverable: boolean): Instance {
    const { transport, log } = this.options;
    const serviceLog = log.child({ service: service.id });
    const interceptors = [...(this.options.interceptors?.(service) ?? []), loggingInterceptor(serviceLog)].filter(
      (interceptor): interceptor is Interceptor => interceptor !== undefined,
    );
    const handler = new RequestHandler({
      service,
      catalog: () => this.catalog,
      plugin,
      transport,
      limits: this.limits,
      log: serviceLog,
      hardStop: this.hardStop.signal,
      redeliverable,
      interceptors,
      abandonedEnded: () => this.bindings.get(service.id)?.wake(),
    });
    const inst: Instance = {
      service,
      plugin,
      handler,
      cancelTopic: cancelTopic(service.requestQueue),
      concurrency: service.concurrency ?? this.limits.serviceConcurrency,
      active: 0,
      idle: undefined,
    };
    this.instances.add(inst);
    return inst;
  }

  /** The instance serves no more: let go of the hard-stop signal, and of cancels. */
  private dispose(inst: Instance): void {
    inst.handler.dispose();
    this.instances.delete(inst);
  }

  /**
   * Read the cancel topic of a request topic's namespace, once per namespace. Best effort: a
   * worker that cannot read it still serves, and a cancelled call then ends at its timeout.
   */
  private listenForCancels(requestTopic: string): Promise<Subscription | undefined> {
    const topic = cancelTopic(requestTopic);
    if (!topic) return Promise.resolve(undefined);
    let sub = this.cancels.get(topic);
    if (!sub) {
      const { transport, log } = this.options;
      const opened: Promise<Subscription | undefined> = privateSubscription(transport, topic, 'toolwire-cancel', { receiverQueueSize: 1000 }).then(
        (subscription) => {
          void this.readCancels(subscription, topic);
          return subscription;
        },
        (err: unknown) => {
          log.warn({ err, topic }, 'cannot read cancellations; cancelled calls run to their timeout');
          if (this.cancels.get(topic) === opened) this.cancels.delete(topic);
          return undefined;
        },
      );
      sub = opened;
      this.cancels.set(topic, sub);
    }
    return sub;
  }

  /**
   * A cancel acts only on calls of its own namespace (Pulsar authorizes per namespace: who may
   * publish on tenant-a's cancel topic may not stop tenant-b's calls), and on every call of
   * that id there, a redelivered copy's run included.
   */
  private async readCancels(sub: Subscription, topic: string): Promise<void> {
    try {
      for await (const m of sub) {
        void m.ack();
        const id = m.properties[CANCEL_PROPERTY];
        if (id === undefined) continue;
        for (const inst of this.instances) if (inst.cancelTopic === topic) inst.handler.cancel(id);
      }
    } catch (err) {
      this.options.log.warn({ err, topic }, 'cancellations no longer read');
    }
  }

  /** Close the cancel subscriptions of namespaces no instance runs in any more (reopened when a service comes back). */
  private pruneCancels(): void {
    if (this.#state !== WorkerState.Running || this.applying) return;
    const needed = new Set<string | undefined>();
    for (const inst of this.instances) needed.add(inst.cancelTopic);
    for (const [topic, sub] of this.cancels) {
      if (needed.has(topic)) continue;
      this.cancels.delete(topic);
      void sub.then((subscription) => subscription?.close()).catch((err: unknown) => this.options.log.warn({ err, topic }, 'cancel subscription close failed'));
      this.options.log.info({ topic }, 'no service left in the namespace; cancellations no longer read');
    }
  }

  private async bind(service: ToolService, plugin: Plugin, signal?: AbortSignal): Promise<Binding> {
    const { transport, log } = this.options;
    const prefetch = this.prefetch(service);
    const subscription = await transport.subscribe(
      {
        topic: service.requestQueue,
        subscription: service.subscription,
        type: 'Shared',
        receiverQueueSize: prefetch,
        nackRedeliveryDelayMs: this.limits.nackDelayMs,
      },
      signal,
    );
    // After the service's own subscription: where the broker refuses this role the requests,
    // it would refuse their cancels too, and a second refusal is only noise. Before the intake
    // starts, so that a cancel of an early request is not missed.
    await this.listenForCancels(service.requestQueue);
    const binding: Binding = {
      current: this.instance(service, plugin, subscription.redeliverable),
      subscription,
      topic: service.requestQueue,
      name: service.subscription,
      prefetch,
      loop: Promise.resolve(),
      stopped: false,
      wake: () => undefined,
    };
    const consume = subscription.redeliverable ? consumeTaking(binding, this.intake) : consumeAll(binding, this.intake);
    binding.loop = consume.catch((err: unknown) => {
      // The subscription itself failed: say so loudly; readiness reports the transport.
      log.error({ err, service: service.id }, 'intake loop failed; service no longer consumed');
    });
    log.info({ service: service.id, topic: service.requestQueue, subscription: service.subscription, plugin: plugin.kind }, 'consuming');
    return binding;
  }

  /** An instance a reload replaced on the same subscription: once its calls have settled, close its plugin. */
  private async closeWhenIdle(inst: Instance): Promise<void> {
    if (inst.active > 0) await new Promise<void>((resolve) => (inst.idle = resolve));
    this.dispose(inst);
    this.pruneCancels();
    await inst.plugin.close?.().catch((err: unknown) => this.options.log.warn({ err, service: inst.service.id }, 'plugin close failed'));
    this.options.log.info({ service: inst.service.id }, 'replaced service instance drained');
  }

  /** A binding a reload removed or moved: stop its intake, let what it took settle, then close it and unsubscribe. */
  private async retireBinding(binding: Binding): Promise<void> {
    const { log } = this.options;
    binding.subscription.removeOnClose();
    binding.stopped = true;
    binding.wake();
    await binding.subscription.stop().catch((err: unknown) => log.warn({ err, service: binding.current.service.id }, 'stop failed'));
    await binding.loop;
    const inst = binding.current;
    if (inst.active > 0) await new Promise<void>((resolve) => (inst.idle = resolve));
    await this.closeBinding(binding, false);
    this.pruneCancels();
    log.info({ service: inst.service.id, unsubscribed: true }, 'retired service instance drained');
  }

  /** Close a binding's subscription (unsubscribing when asked) and its instance's plugin, now. */
  private async closeBinding(binding: Binding, unsubscribe: boolean): Promise<void> {
    const { log } = this.options;
    const { service, plugin } = binding.current;
    if (unsubscribe) binding.subscription.removeOnClose();
    binding.stopped = true;
    binding.wake();
    await binding.subscription.close().catch((err: unknown) => log.warn({ err, service: service.id }, 'close failed'));
    this.dispose(binding.current);
    await plugin.close?.().catch((err: unknown) => log.warn({ err, service: service.id }, 'plugin close failed'));
  }

  /** Close the plugins create() made that no binding took. */
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
  private dispatch(inst: Instance, msg: IncomingMessage, done: () => void, receivedAt: number, fresh: boolean): void {
    const work = this.global.tryAcquire()
      ? this.run(inst, msg, receivedAt, fresh ? receivedAt : undefined)
      : new Promise<Outcome>((resolve) => this.global.acquire(() => resolve(this.run(inst, msg, receivedAt, undefined))));
    this.track(inst, work, done, this.global);
  }

  /** The handler's promise; a throw as it is called becomes a rejection, tracked like any other. */
  private run(inst: Instance, msg: IncomingMessage, receivedAt: number, startedAt: number | undefined): Promise<Outcome> {
    try {
      return inst.handler.handle(msg, receivedAt, startedAt);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Count a request's outcome and keep it in flight (for drain, and its instance's retire)
   * until it settles; then give back its global slot, if it holds one, and call `done`.
   */
  private track(inst: Instance, work: Promise<Outcome>, done?: () => void, slot?: Slots): void {
    // One reaction for both ends, not then/catch/finally: three promises a request on the hot path.
    const settled = (): void => {
      if (--this.inFlight === 0) this.allSettled?.();
      if (--inst.active === 0) inst.idle?.();
      slot?.release();
      done?.();
    };
    void work.then(
      (outcome) => {
        this.count(outcome);
        settled();
      },
      (err: unknown) => {
        this.options.log.error({ err }, 'request handler failed');
        settled();
      },
    );
    this.inFlight++;
    inst.active++;
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
    const bindings = [...this.bindings.values()];
    for (const b of bindings) {
      b.stopped = true;
      b.wake();
    }
    for (const b of bindings) await b.subscription.stop().catch((err: unknown) => log.warn({ err }, 'stop failed'));
    // Loops of persistent topics leave at once (woken above); those of non-persistent ones
    // once their backlog has started. Requests keep joining inFlight until then. Instances a
    // reload retired get the same grace.
    const all = (async () => {
      await Promise.all(bindings.map((binding) => binding.loop));
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
    for (const b of bindings) await this.closeBinding(b, false);
    for (const c of this.cancels.values()) await (await c)?.close().catch(() => undefined);
    this.#state = WorkerState.Stopped;
    log.info(this.stats(), 'stopped');
  }
}
