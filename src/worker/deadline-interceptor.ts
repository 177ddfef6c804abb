import { TimeoutError } from '../errors.js';
import type { PluginInterceptor } from './interceptor.js';

/**
 * The call's deadline (`ToolCall.timeoutMs`, worked out once by the handler), counted from
 * when the plugin was invoked: the time its synchronous part took is already spent. When it
 * passes the run is aborted, so a plugin that ignores its signal still cannot hold the request.
 */
export const deadlineInterceptor: PluginInterceptor = async (run, next) => {
  const { tool, service, timeoutMs } = run.call;
  const left = Math.max(0, timeoutMs - (performance.now() - run.invokedAt));
  const timer = setTimeout(() => run.abort.abort(new TimeoutError(`tool ${tool?.name ?? service.id} did not finish within ${timeoutMs} ms`)), left);
  try {
    await next(run);
  } finally {
    clearTimeout(timer);
  }
};
