import { ConfigError } from '../../errors.js';
import type { PluginFaults } from '../plugin-faults.js';

/**
 * Pass a call's chunks through, reporting a ConfigError (the daemon refused the worker's key:
 * the worker's misconfiguration, not the call's) as the service's fault, and clearing it once
 * a call of the service succeeds.
 */
export async function* withFaultReport(service: string, faults: PluginFaults | undefined, chunks: AsyncIterable<string>): AsyncGenerator<string> {
  try {
    yield* chunks;
  } catch (err) {
    if (err instanceof ConfigError) faults?.set(service, err.message);
    throw err;
  }
  faults?.clear(service);
}
