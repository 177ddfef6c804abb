import { TimeoutError } from '../errors.js';
import type { PluginInterceptor } from './interceptor.js';

/**
 * The call's deadline (`ToolCall.timeoutMs`, worked out once by the handler). When it passes
 * the run is aborted, so a plugin that ignores its signal still cannot hold the request.
 */
export const deadlineInterceptor: PluginInterceptor = async (run, next) => {
  const { tool, service, timeoutMs } = run.call;
  const timer = setTimeout(() => run.abort.abort(new TimeoutError(`tool ${tool?.name ?? service.id} did not finish within ${timeoutMs} ms`)), timeoutMs);
  try {
    await next(run);
  } finally {
    clearTimeout(timer);
  }
};
