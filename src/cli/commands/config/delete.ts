import { problemsAfter, refuse } from './catalog-check.js';
import { required } from './config-flags.js';
import type { ConfigSubcommand } from './config-subcommand.js';

/** `config delete --type T --key K`: remove an item, unless the catalog would break without it. */
export const deleteSubcommand: ConfigSubcommand = async (request) => {
  const { io, values } = request;
  const type = required(values.type, '--type');
  const key = required(values.key, '--key');
  return async (opened) => {
    if (!values.force) {
      const problems = await problemsAfter(opened, (entries) => entries.filter((entry) => !(entry.type === type && entry.key === key)), request);
      if (problems.length > 0) return refuse(io, problems, 'deleted');
    }
    const found = await opened.store.delete(type, key);
    if (!found) io.stderr.write(`no ${type} item with key ${key}\n`);
    return found ? 0 : 1;
  };
};
