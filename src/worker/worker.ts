import { setMaxListeners } from 'node:events';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import type { Plugin } from '../plugins/plugin.js';
import { UnavailableError } from '../errors.js';
import type { IncomingMessage, Subscription, Transport } from '../transport/transport.js';
import { isPersistentTopic } from '../transport/topic-name.js';
import { Backlog } from './backlog.js';
import { DEFAULT_LIMITS, type WorkerLimits } from './limits.js';
import { Outcome, RequestHandler } from './request-handler.js';

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
  readonly catalog: Catalog;
  /** One running plugin per service id; services without one are left to other workers. */
  readonly plugins: ReadonlyMap<string, Plugin>;
  readonly log: Logger;
  readonly limits?: Partial<WorkerLimits>;
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

interface Binding {
  readonly service: ToolService;
  readonly subscription: Subscription;
  readonly loop: Promise<void>;
}

/**
 * Consumes every served service's request queue (Shared subscription) and answers through
 * its plugin, with in-flight work bounded globally and per service. stop() stops intake,
 * lets in-flight requests finish within the grace period, and nacks what is left.
 */
export class Worker {
  private readonly limits: WorkerLimits;
  private readonly global: LimitFunction;
  private readonly hardStop = new AbortController();
  private readonly bindings: Binding[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly catalog: Catalog;
  private stopping: Promise<void> | undefined;
  private intakeStopped = false;
  /** Wake intake loops waiting for a free slot, so stop() need not wait for one. */
  private readonly wakers = new Set<() => void>();
  private readonly counts = { received: 0, answered: 0, failed: 0, nacked: 0, deadLettered: 0, duplicates: 0, shed: 0 };
  private readonly backlogs = new Set<Backlog>();
  state: WorkerState = WorkerState.Idle;

  constructor(private readonly options: WorkerOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    // Each service's handler listens on hardStop: more than Node's default of 10 services is
    // normal, not a leak.
    setMaxListeners(0, this.hardStop.signal);
    this.global = pLimit(this.limits.concurrency);
    this.catalog = options.catalog;
  }

  stats(): WorkerStats {
    let queued = 0;
    for (const b of this.backlogs) queued += b.size;
    return { state: this.state, inFlight: this.inFlight.size, queued, ...this.counts };
  }

  /** The services this worker answers. */
  served(): ToolService[] {
    return this.bindings.map((b) => b.service);
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.state !== WorkerState.Idle) throw new Error(`worker cannot start from state ${this.state}`);
    const { transport, plugins, log } = this.options;
    try {
      for (const service of this.catalog.services.values()) {
        const plugin = plugins.get(service.id);
        if (!plugin) {
          log.info({ service: service.id }, 'service has no plugin here; not consumed');
          continue;
        }
        const concurrency = service.concurrency ?? this.limits.serviceConcurrency;
        const subscription = await transport.subscribe(
          {
            topic: service.requestQueue,
            subscription: service.subscription,
            type: 'Shared',
            // Persistent: a small prefetch leaves the rest with the broker for other workers.
            // Non-persistent: the broker drops what finds no room, so take all it allows.
            receiverQueueSize: isPersistentTopic(service.requestQueue) ? Math.min(1000, Math.max(concurrency, 1) * 2) : this.limits.nonPersistentPrefetch,
            nackRedeliveryDelayMs: this.limits.nackDelayMs,
          },
          signal,
        );
        const handler = new RequestHandler({
          service,
          catalog: () => this.catalog,
          plugin,
          transport,
          limits: this.limits,
          log: log.child({ service: service.id }),
          hardStop: this.hardStop.signal,
          redeliverable: subscription.redeliverable,
        });
        const consume = subscription.redeliverable ? this.consume(subscription, concurrency, handler) : this.consumeAll(subscription, concurrency, handler);
        const loop = consume.catch((err: unknown) => {
          // The subscription itself failed: say so loudly; readiness reports the transport.
          log.error({ err, service: service.id }, 'intake loop failed; service no longer consumed');
        });
        this.bindings.push({ service, subscription, loop });
        log.info({ service: service.id, topic: service.requestQueue, subscription: service.subscription, plugin: plugin.kind }, 'consuming');
      }
      this.state = WorkerState.Running;
    } catch (err) {
      this.state = WorkerState.Failed;
      await Promise.all(this.bindings.map((b) => b.subscription.close().catch(() => undefined)));
      throw err;
    }
  }

  /**
   * The service's bound is kept here, by taking no more than it may run, so it needs a counter
   * rather than a second limiter (a nested p-limit cost a few promises per request). The
   * global bound, shared by every service, queues in p-limit in arrival order.
   */
  private async consume(subscription: Subscription, concurrency: number, handler: RequestHandler): Promise<void> {
    let freed: (() => void) | undefined;
    let taken = 0;
    const wake = () => freed?.();
    this.wakers.add(wake);
    for await (const msg of subscription) {
      this.counts.received++;
      taken++;
      this.track(
        this.global(() => handler.handle(msg)),
        () => {
          taken--;
          freed?.();
        },
      );
      // Take no more than the service may run: the rest stays with the broker.
      while (taken >= concurrency && !this.intakeStopped) {
        await new Promise<void>((resolve) => (freed = resolve));
        freed = undefined;
      }
      // Stopping: leave the loop now rather than when a slot frees (that could be a tool's timeout away).
      if (this.intakeStopped) break;
    }
    this.wakers.delete(wake);
  }

  /**
   * A non-persistent topic: every message is taken as it comes (the broker would drop what
   * waits), and what cannot start yet waits in a bounded backlog; past its bound a request is
   * answered `unavailable` at once. stop() does not leave the loop early: what the
   * subscription received exists nowhere else, so it is all answered, within the grace
   * period or, past it, with `unavailable` (the handler runs nothing after the hard stop).
   */
  private async consumeAll(subscription: Subscription, concurrency: number, handler: RequestHandler): Promise<void> {
    const { log } = this.options;
    const backlog = new Backlog(this.limits.backlogMessages, this.limits.backlogBytes);
    this.backlogs.add(backlog);
    let running = 0;
    let shedLogged = 0;
    let emptied: (() => void) | undefined;
    const run = (msg: IncomingMessage): void => {
      running++;
      this.track(this.global(() => handler.handle(msg)), () => {
        running--;
        const next = backlog.shift();
        if (next) run(next);
        if (backlog.size === 0) emptied?.();
      });
    };
    // Past the grace period the backlog is answered at once: nothing of it will run.
    const flush = (): void => {
      for (let m = backlog.shift(); m; m = backlog.shift()) run(m);
      emptied?.();
    };
    this.hardStop.signal.addEventListener('abort', flush, { once: true });
    for await (const msg of subscription) {
      this.counts.received++;
      if (running < concurrency || this.hardStop.signal.aborted) run(msg);
      else if (!backlog.push(msg)) {
        this.counts.shed++;
        // One line a second at most: a shedding worker is busy enough.
        if (Date.now() - shedLogged > 1000) {
          shedLogged = Date.now();
          log.warn({ topic: subscription.topic, backlog: backlog.size, backlogBytes: backlog.bytes, shed: this.counts.shed }, 'request backlog full; answering unavailable');
        }
        this.track(handler.refuse(msg, new UnavailableError('the tool worker is overloaded (its request backlog is full); try again')));
      }
    }
    // Intake is over; every request of the backlog is started before the loop ends, so that
    // drain() finds it among those in flight.
    if (backlog.size > 0) await new Promise<void>((resolve) => (emptied = resolve));
    this.hardStop.signal.removeEventListener('abort', flush);
    this.backlogs.delete(backlog);
  }

  /** Count a request's outcome and keep it in inFlight (for drain) until it settles; then `done`. */
  private track(work: Promise<Outcome>, done?: () => void): void {
    const task: Promise<void> = work
      .then((outcome) => this.count(outcome))
      .catch((err: unknown) => this.options.log.error({ err }, 'request handler failed'))
      .finally(() => {
        this.inFlight.delete(task);
        done?.();
      });
    this.inFlight.add(task);
  }

  private count(outcome: Outcome): void {
    if (outcome === Outcome.Answered) this.counts.answered++;
    else if (outcome === Outcome.Failed) this.counts.failed++;
    else if (outcome === Outcome.Nacked) this.counts.nacked++;
    else if (outcome === Outcome.Duplicate) this.counts.duplicates++;
    else this.counts.deadLettered++;
  }

  /** Idempotent. Resolves when every taken request is settled and subscriptions are closed. */
  stop(graceMs = this.limits.shutdownGraceMs): Promise<void> {
    this.stopping ??= this.drain(graceMs);
    return this.stopping;
  }

  private async drain(graceMs: number): Promise<void> {
    const { log, plugins } = this.options;
    this.state = WorkerState.Draining;
    log.info({ inFlight: this.inFlight.size, graceMs }, 'draining');
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
    this.intakeStopped = true;
    for (const wake of this.wakers) wake();
    for (const b of this.bindings) await b.subscription.stop().catch((err: unknown) => log.warn({ err }, 'stop failed'));
    // Loops of persistent topics leave at once (woken above); those of non-persistent ones
    // once their backlog has started. Requests keep joining inFlight until then.
    const all = (async () => {
      await Promise.all(this.bindings.map((b) => b.loop));
      while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
      return 'done' as const;
    })();
    if ((await Promise.race([all, graceOver])) === 'timeout') {
      log.warn({ inFlight: this.inFlight.size }, 'grace period over; aborting in-flight requests');
      this.hardStop.abort();
      await all;
    }
    clearTimeout(timer);
    for (const b of this.bindings) await b.subscription.close().catch((err: unknown) => log.warn({ err }, 'close failed'));
    for (const p of plugins.values()) await p.close?.().catch((err: unknown) => log.warn({ err }, 'plugin close failed'));
    this.state = WorkerState.Stopped;
    log.info(this.stats(), 'stopped');
  }
}
