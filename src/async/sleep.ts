import { setTimeout as delay } from 'node:timers/promises';
import { abortError } from './abort-error.js';

/**
 * Wait `ms`, or reject as soon as `signal` aborts: with its reason when that is a typed
 * ToolwireError (a call's deadline), else with AbortedError (a close, a shutdown).
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return delay(ms);
  try {
    await delay(ms, undefined, { signal });
  } catch (err) {
    if (signal.aborted) throw abortError(signal, 'aborted while waiting');
    throw err;
  }
}
