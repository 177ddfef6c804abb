/**
 * The abort side of one tool call: the signal the plugin gets, and a race that ends as soon as
 * the call is aborted (its deadline, a cancel, or the worker's hard stop), so the handler can
 * stop waiting on a plugin that ignores its signal. Whoever aborts calls abort(); nothing
 * listens on the signal. The AbortController is made only when a plugin reads `signal`: most
 * in-process tools never do, and one per request shows on the hot path
 * (docs/benchmarks-rationale.md). The race is one promise, not an `aborted` promise raced with
 * Promise.race (five promises and an array a request).
 */
export class CallAbort {
  private controller: AbortController | undefined;
  private why: Error | undefined;
  /** Rejects the pending race, if any; a race already settled ignores it. */
  private rejectRace: ((reason: Error) => void) | undefined;

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

  /** Settles as `work` does, or rejects with the abort's reason as soon as the call is aborted, whichever comes first. */
  race(work: Promise<void>): Promise<void> {
    if (this.why !== undefined) return Promise.reject(this.why);
    return new Promise<void>((resolve, reject) => {
      this.rejectRace = reject;
      work.then(resolve, reject);
    });
  }

  abort(reason: Error): void {
    if (this.why !== undefined) return;
    this.why = reason;
    this.controller?.abort(reason);
    this.rejectRace?.(reason);
    this.rejectRace = undefined;
  }
}
