import { AbortedError } from '../errors.js';
import type { CallAbort } from './call-abort.js';
import type { PluginInterceptor } from './interceptor.js';

/**
 * The calls of one service running in its plugin, by request id, so that an agent's cancel
 * reaches its call and the worker's hard stop reaches all of them: one listener per service,
 * not one per request. One id may run twice at once (the broker redelivered a request whose
 * first run still goes): both are kept, and a cancel or the hard stop aborts both. A run that
 * would start after the hard stop (it waited past the grace period for a slot) is refused by
 * admit() before the plugin sees it.
 */
export class RunningCalls {
  /** One call per id as a rule; a Set only while an id runs more than once (no allocation per request). */
  private readonly calls = new Map<string, CallAbort | Set<CallAbort>>();

  private readonly abortAll = (): void => {
    for (const entry of [...this.calls.values()]) abortEach(entry, shutdownError());
  };

  readonly interceptor: PluginInterceptor = async (run, next) => {
    this.add(run.requestId, run.abort);
    try {
      await next(run);
    } finally {
      this.remove(run.requestId, run.abort);
    }
  };

  constructor(private readonly hardStop: AbortSignal) {
    hardStop.addEventListener('abort', this.abortAll, { once: true });
  }

  /** Throws once the hard stop came: a call that waited past the grace period for its slot must not reach the plugin. */
  admit(): void {
    if (this.hardStop.aborted) throw shutdownError();
  }

  /** Abort every call of request `id` running here; true if there was one. */
  cancel(id: string): boolean {
    const entry = this.calls.get(id);
    if (entry === undefined) return false;
    abortEach(entry, new AbortedError('the agent cancelled the call'));
    return true;
  }

  private add(id: string, call: CallAbort): void {
    const entry = this.calls.get(id);
    if (entry === undefined) this.calls.set(id, call);
    else if (entry instanceof Set) entry.add(call);
    else this.calls.set(id, new Set([entry, call]));
  }

  private remove(id: string, call: CallAbort): void {
    const entry = this.calls.get(id);
    if (entry === call) this.calls.delete(id);
    else if (entry instanceof Set) {
      entry.delete(call);
      if (entry.size === 1) this.calls.set(id, entry.values().next().value!);
    }
  }

  /** Let go of the hard-stop signal: a service retired by a reload outlives nothing. */
  dispose(): void {
    this.hardStop.removeEventListener('abort', this.abortAll);
  }
}

function abortEach(entry: CallAbort | Set<CallAbort>, reason: Error): void {
  if (entry instanceof Set) for (const call of [...entry]) call.abort(reason);
  else entry.abort(reason);
}

/** Why in-flight calls end when the grace period is over. */
export function shutdownError(): AbortedError {
  return new AbortedError('the worker is shutting down');
}
