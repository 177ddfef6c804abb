/**
 * The abort side of one tool call: the AbortController the plugin gets, and a promise that
 * rejects as soon as the call is aborted (its timeout, or the worker's hard stop), so the
 * handler can stop waiting on a plugin that ignores its signal. Whoever aborts calls
 * abort(); nothing listens on the signal, which keeps the per-request cost to the
 * controller itself (listeners on AbortSignals showed up in the worker's profile).
 */
export class CallAbort {
  readonly controller = new AbortController();
  /** Rejects with the abort reason; never resolves. */
  readonly aborted: Promise<never>;
  private rejectAborted!: (reason: unknown) => void;
  private timer: NodeJS.Timeout | undefined;

  constructor() {
    this.aborted = new Promise<never>((_, reject) => (this.rejectAborted = reject));
    // Nobody may be waiting on it when it fires (the call already ended): not an unhandled rejection.
    this.aborted.catch(() => undefined);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort(reason);
    this.rejectAborted(reason);
  }

  /** Abort with `reason()` after `ms`, unless disposed first. */
  deadline(ms: number, reason: () => Error): void {
    this.timer = setTimeout(() => this.abort(reason()), ms);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
