import type { Logger } from 'pino';
import { ID_PROPERTY } from '../envelope/properties.js';
import type { Interceptor } from './interceptor.js';

/**
 * A debug line per settled request, with its outcome and time. Only at debug level: a line
 * per request is one of a busy worker's largest costs (docs/benchmarks-rationale.md), so at
 * info the interceptor is not in the chain at all.
 */
export function loggingInterceptor(log: Logger): Interceptor | undefined {
  if (!log.isLevelEnabled('debug')) return undefined;
  return async (ctx, next) => {
    const outcome = await next(ctx);
    log.debug(
      {
        requestId: ctx.message.properties[ID_PROPERTY],
        tool: ctx.tool?.name,
        outcome,
        ms: +(performance.now() - ctx.receivedAt).toFixed(3),
        ...(ctx.errorType ? { errorType: ctx.errorType } : {}),
      },
      'request settled',
    );
    return outcome;
  };
}
