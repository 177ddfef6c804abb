import { UsageError } from '../../args.js';
import { required } from './config-flags.js';
import type { ConfigSubcommand } from './config-subcommand.js';

/** `config get --type T --key K`: print an item's JSON; exit 1 when there is none. */
export const getSubcommand: ConfigSubcommand = async ({ io, values }) => {
  const type = required(values.type, '--type');
  const key = required(values.key, '--key');
  return async (opened) => {
    const entry = await opened.store.get(type, key);
    if (!entry) {
      io.stderr.write(`no ${type} item with key ${key}\n`);
      return 1;
    }
    if (entry.error) throw new UsageError(`${entry.source}: ${entry.error}`);
    io.stdout.write(`${JSON.stringify(entry.value, null, 2)}\n`);
    return 0;
  };
};
