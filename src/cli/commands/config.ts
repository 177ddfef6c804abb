import { UsageError } from '../args.js';
import { defineCommand, type Command } from '../command.js';
import { settingsFromFlags } from '../setting-flags.js';
import { CONFIG_FLAGS } from './config/config-flags.js';
import type { ConfigSubcommand } from './config/config-subcommand.js';
import { deleteSubcommand } from './config/delete.js';
import { getSubcommand } from './config/get.js';
import { importSubcommand } from './config/import.js';
import { listSubcommand } from './config/list.js';
import { openStore, storeKind } from './config/open-store.js';
import { putSubcommand } from './config/put.js';

const HELP = `Usage: toolwire config <put|get|list|delete|import> [options]

Manages descriptors where workers read them: the config directory (default), TrustGraph's
config service through its API gateway, or the config service's queues on the broker.
The flags are those of TrustGraph's tg-put-config-item / tg-get-config-item /
tg-list-config-items / tg-delete-config-item.

  put     --type T --key K (--value JSON | --stdin)   write an item
  get     --type T --key K                            print an item's JSON
  list    --type T                                    print the keys of a type
  delete  --type T --key K                            remove an item
  import  DIR                                         put every tool-service and tool of a
                                                      descriptor directory in one request

put, delete and import first check the catalog that would result, and refuse a change that
would break it (--force writes anyway). Against the directory the plugins' own checks run
here: a module plugin's file is imported (its code runs), an MCP server is connected to;
--static leaves them out. Against TrustGraph the checks that need a worker's own machine
(modules, secrets, binaries) are left to the workers, which refuse such a change and keep
serving the last good catalog.

Where (default: the directory):
  -d, --config-dir DIR  the directory store       $TOOLWIRE_CONFIG_DIR or ./config
      --store S         directory | trustgraph | pulsar (implied by -u or --pulsar-url)
  -u, --api-url URL     TrustGraph's API gateway  $TRUSTGRAPH_URL or http://localhost:8888/
  -t, --token TOKEN     gateway bearer token      $TRUSTGRAPH_TOKEN
      --pulsar-url URL  the config queues on the broker   $PULSAR_URL
      --admin-url URL   the broker's admin/WebSocket URL  $PULSAR_ADMIN_URL
  -w, --workspace W     TrustGraph workspace      $TRUSTGRAPH_WORKSPACE or default

Item:
      --type T          config type: tool-service or tool (others are stored as given)
  -k, --key K           config key (for a tool-service, its id)
  -v, --value JSON      the item's value
      --stdin           read the value from standard input
      --force           write even if the catalog would not validate
      --static          check the catalog without executing modules or contacting backends
`;

const OPERATIONS: ReadonlyMap<string, ConfigSubcommand> = new Map([
  ['put', putSubcommand],
  ['get', getSubcommand],
  ['list', listSubcommand],
  ['delete', deleteSubcommand],
  ['import', importSubcommand],
]);

/**
 * `toolwire config <operation>`: the operation may come anywhere among the flags, as in
 * `toolwire config -d DIR list --type tool`, and every operation takes every flag.
 */
export const configCommand: Command = defineCommand({
  name: 'config',
  summary: 'put, get, list, delete or import descriptors (tg-put-config-item flags)',
  help: HELP,
  flags: CONFIG_FLAGS,
  async run(io, { values, positionals }) {
    const [name, ...operands] = positionals;
    if (!name) {
      io.stdout.write(HELP);
      return 2;
    }
    const operation = OPERATIONS.get(name);
    if (!operation) throw new UsageError(`unknown config operation "${name}" (${[...OPERATIONS.keys()].join(', ')})`);
    const { settings } = settingsFromFlags(io.env, values);
    const kind = storeKind(values);
    const act = await operation({ io, values, operands, settings });
    const opened = await openStore(kind, values, io, settings);
    try {
      return await act(opened);
    } finally {
      await opened.close();
    }
  },
});
