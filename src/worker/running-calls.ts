import { AbortedError } from '../errors.js';
import type { CallAbort } from './call-abort.js';
import type { PluginInterceptor } from './interceptor.js';

/**
 * The calls of one service running in its plugin, by request id, so that an agent's cancel
 * reaches its call and the worker's hard stop reaches all of them: one listener per service,
 * not one per request. A run that starts after the hard stop (it waited past the grace period
 * for a slot) is refused before the plugin sees it.
 */
export class RunningCalls {
  private readonly calls = new Map<string, CallAbort>();

  constructor(private readonly hardStop: AbortSignal) {
    hardStop.addEventListener('abort', this.abortAll, { once: true });
  }

  private readonly abortAll = (): void => {
    for (const call of this.calls.values()) call.abort(shutdownError());
  };

  /** Abort the call of request `id` if it runs here; true if it did. */
  cancel(id: string): boolean {
    const call = this.calls.get(id);
    call?.abort(new AbortedError('the agent cancelled the call'));
    return call !== undefined;
  }

  readonly interceptor: PluginInterceptor = async (run, next) => {
    if (this.hardStop.aborted) throw shutdownError();
    this.calls.set(run.requestId, run.abort);
    try {
      await next(run);
    } finally {
      if (this.calls.get(run.requestId) === run.abort) this.calls.delete(run.requestId);
    }
  };

  /** Let go of the hard-stop signal: a service retired by a reload outlives nothing. */
  dispose(): void {
    this.hardStop.removeEventListener('abort', this.abortAll);
  }
}

/** Why in-flight calls end when the grace period is over. */
export function shutdownError(): AbortedError {
  return new AbortedError('the worker is shutting down');
}
