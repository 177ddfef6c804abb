import { AbortedError, ToolwireError } from '../errors.js';

/**
 * The error to raise for an aborted wait or call: the signal's reason when it is a typed one
 * (the worker aborts a call with its TimeoutError or CancelledError, which the agent must
 * read as such), else an AbortedError carrying the reason as its cause.
 */
export function abortError(signal: AbortSignal, message = 'the tool call was aborted'): ToolwireError {
  const reason: unknown = signal.reason;
  if (reason instanceof ToolwireError) return reason;
  return new AbortedError(message, { cause: reason });
}
