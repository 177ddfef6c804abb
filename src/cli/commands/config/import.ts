import { DESCRIPTOR_TYPES } from '../../../config/config-source.js';
import { DirectoryConfigStore } from '../../../config/directory-store.js';
import { UsageError } from '../../args.js';
import type { ConfigSubcommand } from './config-subcommand.js';
import { writeItems } from './write-items.js';

/** `config import DIR`: put every tool-service and tool of a descriptor directory, in one request. */
export const importSubcommand: ConfigSubcommand = async (request) => {
  const dir = request.operands[0];
  if (!dir) throw new UsageError('import needs the directory to read');
  const found = await new DirectoryConfigStore(dir).entries(DESCRIPTOR_TYPES);
  const broken = found.filter((entry) => entry.error);
  if (broken.length > 0) throw new UsageError(`not imported: ${broken.map((entry) => `${entry.source}: ${entry.error}`).join('; ')}`);
  if (found.length === 0) throw new UsageError(`${dir} holds no tool-service or tool descriptors (<dir>/tool-service/*.json, <dir>/tool/*.json)`);
  const items = found.map((entry) => ({ type: entry.type, key: entry.key, value: JSON.stringify(entry.value) }));
  return async (opened) => {
    const exitCode = await writeItems(request, opened, items);
    if (exitCode === 0) request.io.stdout.write(`${items.length} item(s) put into ${opened.where}\n`);
    return exitCode;
  };
};
