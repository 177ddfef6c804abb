import type { Catalog } from '../catalog/catalog.js';
import pLimit from 'p-limit';
import type { ToolService } from '../catalog/descriptors.js';
import type { Plugin } from '../plugins/plugin.js';
import { isPersistentTopic } from '../transport/topic-name.js';
import type { Subscription, Transport } from '../transport/transport.js';
import type { CancelListener } from './cancel-listener.js';
import { consumeAll, consumeTaking, type Intake, type IntakeDeps, type IntakeSource } from './intake.js';
import type { Interceptor } from './interceptor.js';
import { defaultNonPersistentPrefetch, type WorkerLimits } from './limits.js';
import { loggingInterceptor } from './logging-interceptor.js';
import { RequestHandler } from './request-handler.js';
import { ServiceInstance } from './service-instance.js';

/** What a consumer needs of its worker: the intake's needs, and what its instances are made with. */

/** Subscriptions opened together at start. */
const OPENING_AT_ONCE = 16;
export interface ConsumerDeps extends IntakeDeps {
  readonly transport: Transport;
  /** The catalog new requests resolve against. */
  readonly catalog: () => Catalog;
  /** The composition root's interceptors for a service, outermost first (WorkerOptions.interceptors). */
  readonly interceptors: ((service: ToolService) => readonly (Interceptor | undefined)[]) | undefined;
  readonly cancels: CancelListener;
}

/**
 * How many requests a service's subscription holds for this worker. Persistent: a small
 * prefetch leaves the rest with the broker for other workers. Non-persistent: the broker
 * drops what finds no room, so take all it allows.
 */
export function prefetchOf(service: ToolService, limits: WorkerLimits, transport: Transport): number {
  const concurrency = service.concurrency ?? limits.serviceConcurrency;
  return isPersistentTopic(service.requestQueue)
    ? Math.min(1000, Math.max(concurrency, 1) * 2)
    : (limits.nonPersistentPrefetch ?? defaultNonPersistentPrefetch(transport.kind));
}

/**
 * One service's consumption: its subscription (Shared), the intake loop that takes from it,
 * and the instance that answers what is taken. Only this class changes them; the worker
 * opens, swaps, retires and closes it.
 */
export class ServiceConsumer implements IntakeSource {
  #current: ServiceInstance;
  #stopped = false;
  private readonly intake: Intake;
  /** The intake loop; settles, never rejects, once intake is over. */
  readonly done: Promise<void>;

  /** Subscribe to the service's request topic and start taking. The consumer owns `plugin`: if it cannot open, the plugin is closed. */
  static async open(service: ToolService, plugin: Plugin, deps: ConsumerDeps, signal?: AbortSignal): Promise<ServiceConsumer> {
    const prefetch = prefetchOf(service, deps.limits, deps.transport);
    const { requestQueue: topic, subscription: name } = service;
    let subscription: Subscription;
    try {
      subscription = await deps.transport.subscribe(
        { topic, subscription: name, type: 'Shared', receiverQueueSize: prefetch, nackRedeliveryDelayMs: deps.limits.nackDelayMs },
        signal,
      );
    } catch (err) {
      await plugin.close?.().catch((closeErr: unknown) => deps.log.warn({ err: closeErr, service: service.id }, 'plugin close failed'));
      throw err;
    }
    // After the service's own subscription: where the broker refuses this role the requests,
    // it would refuse their cancels too, and a second refusal is only noise. Before the intake
    // starts, so that a cancel of an early request is not missed.
    await deps.cancels.listen(service.requestQueue);
    return new ServiceConsumer(service, plugin, subscription, prefetch, deps);
  }

  /**
   * Consumers for many services, opened OPENING_AT_ONCE at a time: on pulsar-ws each is a
   * socket (and, on a persistent topic, an admin call) of its own, and a thousand opened one by
   * one kept the last service waiting for seconds. If one cannot open, those that did are closed
   * and its error is thrown; every plugin is closed either way.
   */
  static async openAll(services: readonly (readonly [ToolService, Plugin])[], deps: ConsumerDeps, signal?: AbortSignal): Promise<ServiceConsumer[]> {
    const limit = pLimit(OPENING_AT_ONCE);
    const opened = await Promise.allSettled(services.map(([service, plugin]) => limit(() => ServiceConsumer.open(service, plugin, deps, signal))));
    const failed = opened.find((o) => o.status === 'rejected');
    const consumers = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    if (!failed) return consumers;
    await Promise.all(consumers.map((c) => c.close(false)));
    throw failed.reason;
  }

  private constructor(
    /** The service as it was opened: where it is consumed. */
    private readonly opened: ToolService,
    plugin: Plugin,
    readonly subscription: Subscription,
    private readonly prefetch: number,
    private readonly deps: ConsumerDeps,
  ) {
    this.#current = this.instance(opened, plugin);
    this.intake = subscription.redeliverable ? consumeTaking(this, deps) : consumeAll(this, deps);
    this.done = this.intake.done.catch((err: unknown) => {
      // The subscription itself failed: say so loudly; readiness reports the transport.
      deps.log.error({ err, service: opened.id }, 'intake loop failed; service no longer consumed');
    });
    deps.log.info({ service: opened.id, topic: opened.requestQueue, subscription: opened.subscription, plugin: plugin.kind }, 'consuming');
  }

  /** The instance answering what is taken now. */
  get current(): ServiceInstance {
    return this.#current;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Requests taken and waiting for a slot. */
  get queued(): number {
    return this.intake.queued;
  }

  /** True when `service` would be consumed just where this is: same topic, subscription and prefetch. */
  consumesLike(service: ToolService): boolean {
    return (
      service.requestQueue === this.opened.requestQueue &&
      service.subscription === this.opened.subscription &&
      prefetchOf(service, this.deps.limits, this.deps.transport) === this.prefetch
    );
  }

  /**
   * Answer with a new instance from now on, on the same subscription, so nothing in transit is
   * lost. The returned promise settles once the old instance's requests have settled and its
   * plugin is closed.
   */
  swap(service: ToolService, plugin: Plugin): Promise<void> {
    const old = this.#current;
    this.#current = this.instance(service, plugin);
    this.intake.wake(); // its bound may have grown
    return this.closeWhenIdle(old);
  }

  /** Take no more, and have the subscription stop receiving (the intake loop leaves as intake.ts says). */
  async stopTaking(): Promise<void> {
    this.#stopped = true;
    this.intake.wake();
    await this.subscription.stop().catch((err: unknown) => this.deps.log.warn({ err, service: this.opened.id }, 'stop failed'));
  }

  /** A reload removed or moved the service: stop taking, let what was taken settle, then close and unsubscribe. */
  async retire(): Promise<void> {
    this.subscription.removeOnClose();
    await this.stopTaking();
    await this.done;
    const inst = this.#current;
    await inst.idle();
    await this.close(false);
    this.deps.log.info({ service: inst.service.id, unsubscribed: true }, 'retired service instance drained');
  }

  /** Close the subscription (unsubscribing when asked) and the current instance's plugin, now. */
  async close(unsubscribe: boolean): Promise<void> {
    const inst = this.#current;
    if (unsubscribe) this.subscription.removeOnClose();
    this.#stopped = true;
    this.intake.wake();
    await this.subscription.close().catch((err: unknown) => this.deps.log.warn({ err, service: inst.service.id }, 'close failed'));
    this.dispose(inst);
    await this.closePlugin(inst);
  }

  private instance(service: ToolService, plugin: Plugin): ServiceInstance {
    const { deps } = this;
    const log = deps.log.child({ service: service.id });
    const interceptors = [...(deps.interceptors?.(service) ?? []), loggingInterceptor(log)].filter(
      (interceptor): interceptor is Interceptor => interceptor !== undefined,
    );
    const handler = new RequestHandler({
      service,
      catalog: deps.catalog,
      plugin,
      transport: deps.transport,
      limits: deps.limits,
      log,
      hardStop: deps.hardStop,
      redeliverable: this.subscription.redeliverable,
      interceptors,
      abandonedEnded: () => this.intake.wake(),
    });
    deps.cancels.add(service.requestQueue, handler);
    return new ServiceInstance(service, plugin, handler, service.concurrency ?? deps.limits.serviceConcurrency);
  }

  /** A replaced instance: once its requests have settled, close its plugin. */
  private async closeWhenIdle(inst: ServiceInstance): Promise<void> {
    await inst.idle();
    this.dispose(inst);
    await this.closePlugin(inst);
    this.deps.log.info({ service: inst.service.id }, 'replaced service instance drained');
  }

  /** The instance serves no more: let go of the hard-stop signal, and of cancels. */
  private dispose(inst: ServiceInstance): void {
    inst.handler.dispose();
    this.deps.cancels.remove(inst.service.requestQueue, inst.handler);
  }

  private async closePlugin(inst: ServiceInstance): Promise<void> {
    await inst.plugin.close?.().catch((err: unknown) => this.deps.log.warn({ err, service: inst.service.id }, 'plugin close failed'));
  }
}

/**
 * A descriptor change that needs a new instance (topics, plugin, options...). Tools are read
 * through the catalog on each request, so a change of tools alone needs none. An unchanged
 * service comes back from the catalog build as the same object: no JSON to compare.
 */
export function sameService(left: ToolService, right: ToolService): boolean {
  return left === right || JSON.stringify(left.raw) === JSON.stringify(right.raw);
}
