import { required } from './config-flags.js';
import type { ConfigSubcommand } from './config-subcommand.js';

/** `config list --type T`: print the keys of a type, one a line. */
export const listSubcommand: ConfigSubcommand = async ({ io, values }) => {
  const type = required(values.type, '--type');
  return async (opened) => {
    for (const key of await opened.store.keys(type)) io.stdout.write(`${key}\n`);
    return 0;
  };
};
