import type { Logger } from 'pino';
import { UnavailableError } from '../errors.js';
import type { IncomingMessage, Subscription } from '../transport/transport.js';
import { Backlog, type Taken } from './backlog.js';
import type { WorkerLimits } from './limits.js';
import type { ServiceInstance } from './service-instance.js';

/** What an intake loop needs of its worker: its bounds, and where each request it takes goes. */
export interface IntakeDeps {
  readonly limits: WorkerLimits;
  readonly log: Logger;
  /** Aborted when the shutdown grace period is over. */
  readonly hardStop: AbortSignal;
  readonly counts: { received: number; shed: number };
  /**
   * Run a request on `inst` under the global bound; `done` once it has settled. `receivedAt` is
   * when it was taken, `startedAt` when the intake let it start: the same reading for one
   * started as it was taken, which waited for nothing.
   */
  dispatch(inst: ServiceInstance, msg: IncomingMessage, done: () => void, receivedAt: number, startedAt: number): void;
  /** Answer a request without running it. */
  refuse(inst: ServiceInstance, msg: IncomingMessage, err: UnavailableError): void;
}

/** What an intake loop reads of the consumer it takes for; only the consumer changes it. */
export interface IntakeSource {
  readonly subscription: Subscription;
  /** The instance that answers a request taken now (a reload may swap it). */
  readonly current: ServiceInstance;
  /** Intake is over: a reload retired the consumer, or the worker is stopping. */
  readonly stopped: boolean;
}

/** A running intake loop. */
export interface Intake {
  /** Settles when the loop is over; rejects when the subscription failed. */
  readonly done: Promise<void>;
  /** Look again: a slot freed, the bound grew, or intake is over. */
  wake(): void;
  /** Requests taken and waiting for a slot (a non-persistent topic's backlog). */
  readonly queued: number;
}

/**
 * A persistent topic. The service's bound is kept here, by taking no more than it may run, so
 * it needs a counter rather than a second limiter (a nested p-limit cost a few promises per
 * request). The global bound, shared by every service, is the worker's Slots (arrival order).
 */
export function consumeTaking(source: IntakeSource, deps: IntakeDeps): Intake {
  let freed: (() => void) | undefined;
  let taken = 0;
  const release = (): void => {
    taken--;
    freed?.();
  };
  const loop = async (): Promise<void> => {
    for await (const msg of source.subscription) {
      deps.counts.received++;
      taken++;
      const now = performance.now();
      deps.dispatch(source.current, msg, release, now, now);
      // Take no more than the service may run, and nothing while too many of its calls run on
      // past their timeout: the rest stays with the broker.
      while ((taken >= source.current.concurrency || source.current.handler.blocked) && !source.stopped) {
        await new Promise<void>((resolve) => (freed = resolve));
        freed = undefined;
      }
      // Stopping: leave the loop now rather than when a slot frees (that could be a tool's timeout away).
      if (source.stopped) break;
    }
  };
  return { done: loop(), wake: () => freed?.(), queued: 0 };
}

/**
 * A non-persistent topic: every message is taken as it comes (the broker would drop what
 * waits), and what cannot start yet waits in a bounded backlog; past its bound a request is
 * answered `unavailable` at once. Stopping does not leave the loop early: what the
 * subscription received exists nowhere else, so it is all answered, within the grace
 * period or, past it, with `unavailable` (the handler runs nothing after the hard stop).
 * A request starts with the instance current when it starts.
 */
export function consumeAll(source: IntakeSource, deps: IntakeDeps): Intake {
  const { log, hardStop, counts } = deps;
  const backlog = new Backlog(deps.limits.backlogMessages, deps.limits.backlogBytes);
  let running = 0;
  let shedLogged = 0;
  let emptied: (() => void) | undefined;
  const run = (taken: Taken, startedAt = performance.now()): void => {
    running++;
    deps.dispatch(source.current, taken.msg, settled, taken.receivedAt, startedAt);
  };
  const startWaiting = (): void => {
    while (running < source.current.concurrency && backlog.size > 0) run(backlog.shift()!);
    if (backlog.size === 0) emptied?.();
  };
  const settled = (): void => {
    running--;
    startWaiting();
  };
  // Past the grace period the backlog is answered at once: nothing of it will run.
  const flush = (): void => {
    for (let m = backlog.shift(); m; m = backlog.shift()) run(m);
    emptied?.();
  };
  const loop = async (): Promise<void> => {
    hardStop.addEventListener('abort', flush, { once: true });
    for await (const msg of source.subscription) {
      counts.received++;
      const taken: Taken = { msg, receivedAt: performance.now() };
      const inst = source.current;
      if (inst.handler.blocked && !hardStop.aborted) {
        // The broker would drop what waits: answer it rather than run more of a hung service.
        deps.refuse(
          inst,
          msg,
          new UnavailableError(`the tool service ${inst.service.id} has ${inst.handler.abandoned} calls still running past their timeout; try again later`),
        );
      } else if (running < inst.concurrency || hardStop.aborted) run(taken, taken.receivedAt);
      else if (!backlog.push(taken)) {
        counts.shed++;
        // One line a second at most: a shedding worker is busy enough.
        if (Date.now() - shedLogged > 1000) {
          shedLogged = Date.now();
          log.warn(
            { topic: source.subscription.topic, backlog: backlog.size, backlogBytes: backlog.bytes, shed: counts.shed },
            'request backlog full; answering unavailable',
          );
        }
        deps.refuse(inst, msg, new UnavailableError('the tool worker is overloaded (its request backlog is full); try again'));
      }
    }
    // Intake is over; every request of the backlog is started before the loop ends, so that
    // drain() finds it among those in flight.
    if (backlog.size > 0) await new Promise<void>((resolve) => (emptied = resolve));
    hardStop.removeEventListener('abort', flush);
  };
  return {
    done: loop(),
    wake: startWaiting,
    get queued() {
      return backlog.size;
    },
  };
}
