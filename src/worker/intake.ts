import type { Logger } from 'pino';
import { UnavailableError } from '../errors.js';
import type { IncomingMessage } from '../transport/transport.js';
import { Backlog, type Taken } from './backlog.js';
import type { Binding, Instance } from './binding.js';
import type { WorkerLimits } from './limits.js';

/** What an intake loop needs of its worker: its bounds, and where each request it takes goes. */
export interface IntakeDeps {
  readonly limits: WorkerLimits;
  readonly log: Logger;
  /** Aborted when the shutdown grace period is over. */
  readonly hardStop: AbortSignal;
  readonly counts: { received: number; shed: number };
  /**
   * Run a request on `inst` under the global bound; `done` once it has settled. `receivedAt` is
   * when it was taken; `fresh` when that was in this turn, so that a request starting now has
   * waited for nothing and needs no clock read of its own.
   */
  dispatch(inst: Instance, msg: IncomingMessage, done: () => void, receivedAt: number, fresh: boolean): void;
  /** Answer a request without running it. */
  refuse(inst: Instance, msg: IncomingMessage, err: UnavailableError): void;
}

/**
 * A persistent topic. The service's bound is kept here, by taking no more than it may run, so
 * it needs a counter rather than a second limiter (a nested p-limit cost a few promises per
 * request). The global bound, shared by every service, is the worker's Slots (arrival order).
 */
export async function consumeTaking(binding: Binding, deps: IntakeDeps): Promise<void> {
  let freed: (() => void) | undefined;
  let taken = 0;
  const release = (): void => {
    taken--;
    freed?.();
  };
  binding.wake = () => freed?.();
  for await (const msg of binding.subscription) {
    deps.counts.received++;
    taken++;
    deps.dispatch(binding.current, msg, release, performance.now(), true);
    // Take no more than the service may run, and nothing while too many of its calls run on
    // past their timeout: the rest stays with the broker.
    while ((taken >= binding.current.concurrency || binding.current.handler.blocked) && !binding.stopped) {
      await new Promise<void>((resolve) => (freed = resolve));
      freed = undefined;
    }
    // Stopping: leave the loop now rather than when a slot frees (that could be a tool's timeout away).
    if (binding.stopped) break;
  }
}

/**
 * A non-persistent topic: every message is taken as it comes (the broker would drop what
 * waits), and what cannot start yet waits in a bounded backlog; past its bound a request is
 * answered `unavailable` at once. stop() does not leave the loop early: what the
 * subscription received exists nowhere else, so it is all answered, within the grace
 * period or, past it, with `unavailable` (the handler runs nothing after the hard stop).
 * A request starts with the instance current when it starts.
 */
export async function consumeAll(binding: Binding, deps: IntakeDeps): Promise<void> {
  const { log, hardStop, counts } = deps;
  const backlog = new Backlog(deps.limits.backlogMessages, deps.limits.backlogBytes);
  binding.backlog = backlog;
  let running = 0;
  let shedLogged = 0;
  let emptied: (() => void) | undefined;
  const run = (taken: Taken, fresh = false): void => {
    running++;
    deps.dispatch(binding.current, taken.msg, settled, taken.receivedAt, fresh);
  };
  const startWaiting = (): void => {
    while (running < binding.current.concurrency && backlog.size > 0) run(backlog.shift()!);
    if (backlog.size === 0) emptied?.();
  };
  const settled = (): void => {
    running--;
    startWaiting();
  };
  binding.wake = startWaiting;
  // Past the grace period the backlog is answered at once: nothing of it will run.
  const flush = (): void => {
    for (let m = backlog.shift(); m; m = backlog.shift()) run(m);
    emptied?.();
  };
  hardStop.addEventListener('abort', flush, { once: true });
  for await (const msg of binding.subscription) {
    counts.received++;
    const taken: Taken = { msg, receivedAt: performance.now() };
    if (binding.current.handler.blocked && !hardStop.aborted) {
      // The broker would drop what waits: answer it rather than run more of a hung service.
      deps.refuse(
        binding.current,
        msg,
        new UnavailableError(
          `the tool service ${binding.current.service.id} has ${binding.current.handler.abandoned} calls still running past their timeout; try again later`,
        ),
      );
    } else if (running < binding.current.concurrency || hardStop.aborted) run(taken, true);
    else if (!backlog.push(taken)) {
      counts.shed++;
      // One line a second at most: a shedding worker is busy enough.
      if (Date.now() - shedLogged > 1000) {
        shedLogged = Date.now();
        log.warn(
          { topic: binding.subscription.topic, backlog: backlog.size, backlogBytes: backlog.bytes, shed: counts.shed },
          'request backlog full; answering unavailable',
        );
      }
      deps.refuse(binding.current, msg, new UnavailableError('the tool worker is overloaded (its request backlog is full); try again'));
    }
  }
  // Intake is over; every request of the backlog is started before the loop ends, so that
  // drain() finds it among those in flight.
  if (backlog.size > 0) await new Promise<void>((resolve) => (emptied = resolve));
  hardStop.removeEventListener('abort', flush);
  binding.backlog = undefined;
}
