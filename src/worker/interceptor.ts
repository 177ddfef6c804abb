import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { PendingObservation, ToolCall } from '../plugins/plugin.js';
import type { IncomingMessage } from '../transport/transport.js';
import type { CallAbort } from './call-abort.js';
import type { ObservationSink } from './observation-sink.js';
import type { Outcome } from './outcome.js';

/**
 * One delivery on its way through a service's interceptors. The handler fills in what it
 * learns (the tool, the plugin's time, the error type); interceptors read it after `next`.
 * Times are `performance.now()` milliseconds.
 */
export interface CallContext {
  readonly service: ToolService;
  readonly message: IncomingMessage;
  /** When the intake took the message from the broker. */
  readonly receivedAt: number;
  /** When it got a slot and handling began. */
  readonly startedAt: number;
  tool: Tool | undefined;
  pluginStartedAt: number | undefined;
  pluginEndedAt: number | undefined;
  /** The wire error type the agent was answered with, if any. */
  errorType: string | undefined;
  /**
   * Set by an interceptor that must know when the final answer goes to the broker (before
   * the publish is confirmed and the message acked): the handler calls it then, at most once
   * that matters (it may call it again when a failed publish is answered by an error).
   */
  onAnswer: ((ctx: CallContext) => void) | undefined;
  /** The metrics' ticket for this request's answer handed to the broker, if any. */
  handoff: number | undefined;
}

export type Next = (ctx: CallContext) => Promise<Outcome>;

/**
 * A concern around the handling of each request (metrics, logging, tracing...), in the
 * manner of Temporal's worker interceptors: it calls `next` once and returns what it gives.
 * An interceptor must not throw: the handler has settled the message by then.
 */
export type Interceptor = (ctx: CallContext, next: Next) => Promise<Outcome>;

/**
 * The plugin's part of one request whose answer is not there when the plugin returns: the
 * call (decoded, resolved, prepared), what the plugin gave back, and the sink its answer goes
 * to. Interceptors of this inner chain (the deadline, the calls a cancel or the hard stop
 * aborts) see the tool and its arguments; the core waits for the answer and writes it. A
 * plugin that answers at once never enters the chain: nothing can interrupt synchronous code.
 */
export interface PluginRun {
  readonly ctx: CallContext;
  readonly requestId: string;
  readonly call: ToolCall;
  /** What the plugin returned; the call's time runs from `ctx.pluginStartedAt`, before it was invoked. */
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
