import { defaultRegistry } from '../plugins/default-registry.js';
import { readSettings, type Settings } from '../settings.js';

/** A process's settings: the core's, and the variables of the plugin kinds toolwire ships with, as each kind declares them. */
export function readWorkerSettings(env: NodeJS.ProcessEnv, overrides: Partial<Settings> = {}): Settings {
  return readSettings(env, overrides, defaultRegistry().declaredSettings());
}
