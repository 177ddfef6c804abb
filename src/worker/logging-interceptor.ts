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
  return async (input, next) => {
    const result = await next(input);
    log.debug(
      {
        requestId: input.message.properties[ID_PROPERTY],
        tool: result.tool?.name,
        outcome: result.outcome,
        ms: +(performance.now() - input.receivedAt).toFixed(3),
        ...(result.errorType ? { errorType: result.errorType } : {}),
      },
      'request settled',
    );
    return result;
  };
}
