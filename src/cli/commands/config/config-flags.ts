import { UsageError, type Flags, type FlagValues } from '../../args.js';
import { settingOptions } from '../../setting-flags.js';

/** `toolwire config`'s flags, tg-put-config-item's where they have one; every operation takes them all. */
export const CONFIG_FLAGS = {
  type: { type: 'string' },
  key: { type: 'string', short: 'k' },
  value: { type: 'string', short: 'v' },
  stdin: { type: 'boolean' },
  workspace: { type: 'string', short: 'w' },
  'config-dir': { type: 'string', short: 'd' },
  store: { type: 'string' },
  'api-url': { type: 'string', short: 'u' },
  token: { type: 'string', short: 't' },
  ...settingOptions('pulsar-url', 'admin-url'),
  force: { type: 'boolean' },
  static: { type: 'boolean' },
} as const satisfies Flags;

export type ConfigValues = FlagValues<typeof CONFIG_FLAGS>;

/** A flag the operation cannot do without. */
export function required(flagValue: string | undefined, flag: string): string {
  if (!flagValue) throw new UsageError(`${flag} is required`);
  return flagValue;
}
