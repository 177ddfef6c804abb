/**
 * The abort side of one tool call: the signal the plugin gets, and a promise that rejects as
 * soon as the call is aborted (its deadline, a cancel, or the worker's hard stop), so the handler can
 * stop waiting on a plugin that ignores its signal. Whoever aborts calls abort(); nothing
 * listens on the signal. The AbortController is made only when a plugin reads `signal`: most
 * in-process tools never do, and one per request shows on the hot path
 * (docs/benchmarks-rationale.md).
 */
export class CallAbort {
  /** Rejects with the abort reason; never resolves. */
  readonly aborted: Promise<never>;
  private rejectAborted!: (reason: unknown) => void;
  private controller: AbortController | undefined;
  private why: Error | undefined;

  constructor() {
    this.aborted = new Promise<never>((_, reject) => (this.rejectAborted = reject));
    // Nobody may be waiting on it when it fires (the call already ended): not an unhandled rejection.
    this.aborted.catch(() => undefined);
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.why !== undefined) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** Why the call was aborted; undefined while it is not. */
  get reason(): Error | undefined {
    return this.why;
  }

  abort(reason: Error): void {
    if (this.why !== undefined) return;
    this.why = reason;
    this.controller?.abort(reason);
    this.rejectAborted(reason);
  }
}
