import { TimeoutError } from '../errors.js';
import type { PluginInterceptor } from './interceptor.js';

/**
 * The call's timeout: the tool's, else its service's, else the worker's. When it passes the
 * run is aborted, so a plugin that ignores its signal still cannot hold the request.
 */
export function deadlineInterceptor(defaultTimeoutMs: number): PluginInterceptor {
  return async (run, next) => {
    const { tool, service } = run.call;
    const ms = tool?.timeoutMs ?? service.timeoutMs ?? defaultTimeoutMs;
    const timer = setTimeout(() => run.abort.abort(new TimeoutError(`tool ${tool?.name ?? service.id} did not finish within ${ms} ms`)), ms);
    try {
      await next(run);
    } finally {
      clearTimeout(timer);
    }
  };
}
