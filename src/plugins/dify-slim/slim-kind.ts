import { difyOptionsSchema } from '../dify-common/dify-tool-options.js';
import type { KindSettings } from '../kind-settings.js';
import { CHILD_BASICS, slimEnvNames } from './child-env.js';

export const DIFY_SLIM_KIND = 'dify-slim';

/** Dify tools through the slim binary: the same options on a service and on each tool (which win). */
export const difySlimSchemas = { kind: DIFY_SLIM_KIND, serviceOptions: difyOptionsSchema, toolOptions: difyOptionsSchema } as const;

/** The worker settings of the dify-slim plugin, by name (what each means: settings.ts). */
export const DifySlimSetting = {
  Path: 'DIFY_SLIM_PATH',
  Mode: 'DIFY_SLIM_MODE',
  DaemonAddr: 'DIFY_SLIM_DAEMON_ADDR',
  DaemonKey: 'DIFY_SLIM_DAEMON_KEY',
  Folder: 'DIFY_SLIM_FOLDER',
  TimeoutMs: 'DIFY_SLIM_TIMEOUT_MS',
  KillGraceMs: 'DIFY_SLIM_KILL_GRACE_MS',
} as const;

/** The daemon's settings slim's remote mode falls back to (dify-daemon's names). */
export const DaemonFallback = { Url: 'DIFY_DAEMON_URL', Key: 'DIFY_DAEMON_KEY' } as const;

/**
 * Dify's variables, `SLIM_*`, and what slim's child may inherit of the worker's environment
 * (child-env.ts): these reach the plugin only so that the child can be handed them. Both
 * daemon keys are secrets.
 */
export const difySlimSettings: KindSettings = {
  prefixes: ['DIFY_', 'SLIM_'],
  names: (env) => [...CHILD_BASICS, ...slimEnvNames(env)],
  secrets: [DifySlimSetting.DaemonKey, DaemonFallback.Key],
};

/** The dify-slim kind as the registry takes it: its name, option schemas and settings; no plugin code. */
export const difySlimKind = { ...difySlimSchemas, settings: difySlimSettings } as const;
