import { readWorkerSettings } from '../assembly/worker-settings.js';
import type { Settings } from '../settings.js';
import { UsageError } from './args.js';

/** The flags that stand for worker settings, each beside the environment variable it sets. */
export const SETTING_FLAGS = {
  'config-dir': { type: 'string', short: 'd', env: 'TOOLWIRE_CONFIG_DIR' },
  'config-source': { type: 'string', env: 'TOOLWIRE_CONFIG_SOURCE' },
  workspace: { type: 'string', short: 'w', env: 'TOOLWIRE_CONFIG_WORKSPACE' },
  transport: { type: 'string', short: 'T', env: 'TOOLWIRE_TRANSPORT' },
  'pulsar-url': { type: 'string', env: 'PULSAR_URL' },
  'admin-url': { type: 'string', env: 'PULSAR_ADMIN_URL' },
} as const;

export type SettingFlag = keyof typeof SETTING_FLAGS;

/** parseArgs options for some of the setting flags. */
export function settingOptions<K extends SettingFlag>(...names: K[]): { [P in K]: { type: 'string'; short?: string } } {
  const out: Record<string, { type: 'string'; short?: string }> = {};
  for (const n of names) {
    const f = SETTING_FLAGS[n];
    out[n] = 'short' in f ? { type: 'string', short: f.short } : { type: 'string' };
  }
  return out as { [P in K]: { type: 'string'; short?: string } };
}

/**
 * The environment with the given flags laid over it, and the settings read from it; a bad
 * value is a usage error. `extra` sets more variables (a command's own flags).
 */
export function settingsFromFlags(
  env: NodeJS.ProcessEnv,
  values: Partial<Record<SettingFlag, string>>,
  extra: Readonly<Record<string, string | undefined>> = {},
): { env: NodeJS.ProcessEnv; settings: Settings } {
  const out = { ...env };
  for (const [flag, value] of Object.entries(values) as [SettingFlag, string | undefined][]) {
    if (value && flag in SETTING_FLAGS) out[SETTING_FLAGS[flag].env] = value;
  }
  for (const [k, v] of Object.entries(extra)) if (v) out[k] = v;
  try {
    return { env: out, settings: readWorkerSettings(out) };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
