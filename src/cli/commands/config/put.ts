import { readStdin, UsageError } from '../../args.js';
import { required } from './config-flags.js';
import type { ConfigSubcommand } from './config-subcommand.js';
import { writeItems } from './write-items.js';

/** `config put --type T --key K (--value JSON | --stdin)`: write one item. */
export const putSubcommand: ConfigSubcommand = async (request) => {
  const { io, values } = request;
  const type = required(values.type, '--type');
  const key = required(values.key, '--key');
  if ((values.value === undefined) === !values.stdin) throw new UsageError('give exactly one of --value and --stdin');
  const text = values.value ?? (await readStdin(io.stdin));
  checkJson(text, 'the value');
  return (opened) => writeItems(request, opened, [{ type, key, value: text }]);
};

function checkJson(text: string, what: string): void {
  try {
    JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}
