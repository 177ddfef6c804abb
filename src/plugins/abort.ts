import { setTimeout as delay } from 'node:timers/promises';
import { AbortedError, ToolwireError } from '../errors.js';

/** The error to raise for an aborted call: the reason when the worker gave a typed one. */
export function abortError(signal: AbortSignal): ToolwireError {
  const r: unknown = signal.reason;
  if (r instanceof ToolwireError) return r;
  return new AbortedError('the tool call was aborted', { cause: r });
}

/** Wait, unless the signal fires first: then reject with abortError(signal). */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    throw err;
  }
}
