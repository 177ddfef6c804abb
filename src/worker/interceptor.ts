import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { PendingObservation, ToolCall } from '../plugins/plugin.js';
import type { IncomingMessage } from '../transport/transport.js';
import type { CallAbort } from './call-abort.js';
import type { ObservationSink } from './observation-sink.js';
import type { Outcome } from './outcome.js';

/**
 * One delivery as the service's interceptors receive it, read and never filled in (in the
 * manner of Temporal's ActivityExecuteInput): what the handler learns comes back as the
 * CallResult that `next` resolves to. Times are `performance.now()` milliseconds.
 */
export interface CallInput {
  readonly service: ToolService;
  readonly message: IncomingMessage;
  /** When the intake took the message from the broker. */
  readonly receivedAt: number;
  /** When it got a slot and handling began. */
  readonly startedAt: number;
  /**
   * Told when the final answer goes to the broker, before its publish is confirmed: a moment
   * no result can carry, since the request has not settled yet. Called at most once. An
   * interceptor that must know passes `next` an input with its own observer, which calls the
   * one it was given.
   */
  readonly answering?: () => void;
}

/** How one delivery ended, and what the handler learnt on the way; what `next` resolves to. */
export interface CallResult {
  readonly outcome: Outcome;
  /** The tool the request resolved to, if it got that far. */
  readonly tool: Tool | undefined;
  /** When the plugin was invoked and when its answer ended, if it was. */
  readonly pluginStartedAt: number | undefined;
  readonly pluginEndedAt: number | undefined;
  /** The wire error type the agent was answered with, if any. */
  readonly errorType: string | undefined;
}

export type Next = (input: CallInput) => Promise<CallResult>;

/**
 * A concern around the handling of each request (metrics, logging, tracing...), in the
 * manner of Temporal's worker interceptors: it calls `next` once and returns what it gives,
 * reading what it needs from that. An interceptor must not throw: the handler has settled
 * the message by then.
 */
export type Interceptor = (input: CallInput, next: Next) => Promise<CallResult>;

/**
 * The plugin's part of one request whose answer is not there when the plugin returns: the
 * call (decoded, resolved, prepared), what the plugin gave back, and the sink its answer goes
 * to. Interceptors of this inner chain (the deadline, the calls a cancel or the hard stop
 * aborts) see the tool and its arguments; the core waits for the answer and writes it. A
 * plugin that answers at once never enters the chain: nothing can interrupt synchronous code.
 */
export interface PluginRun {
  readonly requestId: string;
  readonly call: ToolCall;
  /** When the plugin was invoked (`performance.now()`): the call's time runs from then. */
  readonly invokedAt: number;
  /** What the plugin returned. */
  readonly observation: PendingObservation;
  readonly sink: ObservationSink;
  /** Aborting it ends the run at once, whether or not the plugin heeds its signal. */
  readonly abort: CallAbort;
}

/** Resolves when the answer is written to the sink; rejects with the plugin's error or the abort's reason. */
export type RunNext = (run: PluginRun) => Promise<void>;

/** Around the plugin call: it may throw (the handler answers the error) and must call `next` at most once. */
export type PluginInterceptor = (run: PluginRun, next: RunNext) => Promise<void>;

/** The interceptors around `core`, the first outermost; built once per service. */
export function compose<C, R>(interceptors: readonly ((context: C, next: (context: C) => R) => R)[], core: (context: C) => R): (context: C) => R {
  let next = core;
  for (let i = interceptors.length - 1; i >= 0; i--) {
    const interceptor = interceptors[i]!;
    const inner = next;
    next = (context) => interceptor(context, inner);
  }
  return next;
}
