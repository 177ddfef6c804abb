import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { IncomingMessage } from '../transport/transport.js';
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
}

export type Next = (ctx: CallContext) => Promise<Outcome>;

/**
 * A concern around the handling of each request (metrics, logging, tracing...), in the
 * manner of Temporal's worker interceptors: it calls `next` once and returns what it gives.
 * An interceptor must not throw: the handler has settled the message by then.
 */
export type Interceptor = (ctx: CallContext, next: Next) => Promise<Outcome>;

/** The interceptors around `core`, the first outermost; built once per service. */
export function compose(interceptors: readonly Interceptor[], core: Next): Next {
  let next = core;
  for (let i = interceptors.length - 1; i >= 0; i--) {
    const interceptor = interceptors[i]!;
    const inner = next;
    next = (ctx) => interceptor(ctx, inner);
  }
  return next;
}
