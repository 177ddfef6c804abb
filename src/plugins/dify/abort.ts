import { AbortedError, ToolwireError } from '../../errors.js';

/** The error to raise for an aborted call: the reason when the worker gave a typed one. */
export function abortError(signal: AbortSignal): ToolwireError {
  const r: unknown = signal.reason;
  if (r instanceof ToolwireError) return r;
  return new AbortedError('the tool call was aborted', { cause: r });
}

/** Wait, unless the signal fires first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
