import type { Tool } from '../catalog/descriptors.js';
import type { CallInput, CallResult } from './interceptor.js';
import { Outcome } from './outcome.js';

/**
 * What the handler learns of one request as it handles it: its own, written only by the
 * handler, and handed to the interceptors as the readonly CallResult once the request settles.
 */
export class CallRecord implements CallResult {
  outcome: Outcome = Outcome.Answered;
  tool: Tool | undefined = undefined;
  pluginStartedAt: number | undefined = undefined;
  pluginEndedAt: number | undefined = undefined;
  errorType: string | undefined = undefined;
  private handedOver = false;

  /** The final answer goes to the broker now: the input's observer hears it once, though a failed publish is answered again. */
  answering(input: CallInput): void {
    if (this.handedOver) return;
    this.handedOver = true;
    input.answering?.();
  }

  /** The request settled so: the record is its result. */
  ended(outcome: Outcome): CallResult {
    this.outcome = outcome;
    return this;
  }
}
