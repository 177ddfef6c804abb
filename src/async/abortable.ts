import { AbortedError } from '../errors.js';

/**
 * Stop waiting for `promise` when `signal` aborts (rejecting with AbortedError). The work
 * itself goes on: `onLate` receives its result if it arrives after the abort, so whatever
 * it opened can be closed.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, what: string, onLate?: (value: T) => void): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.then(onLate, () => undefined);
    return Promise.reject(new AbortedError(`${what} aborted`, { cause: signal.reason }));
  }
  return new Promise<T>((resolve, reject) => {
    let aborted = false;
    const onAbort = (): void => {
      aborted = true;
      reject(new AbortedError(`${what} aborted`, { cause: signal.reason }));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (aborted) onLate?.(value);
        else resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!aborted) reject(err);
      },
    );
  });
}
