import { buildCatalog } from '../../assembly/build-catalog.js';
import { DESCRIPTOR_TYPES } from '../../config/config-source.js';
import type { ConfigEntry, ConfigItem, ConfigStore } from '../../config/config-store.js';
import { DirectoryConfigStore } from '../../config/directory-store.js';
import { BrokerConfigApi } from '../../config/trustgraph/broker-config-api.js';
import { GatewayConfigApi } from '../../config/trustgraph/gateway-config-api.js';
import { TrustGraphConfigStore } from '../../config/trustgraph/trustgraph-store.js';
import { ConfigError } from '../../errors.js';
import { createLogger } from '../../logging.js';
import { defaultRegistry } from '../../plugins/default-registry.js';
import { ExecPolicy } from '../../policy/exec-policy.js';
import { loadSecrets } from '../../secrets.js';
import type { Settings } from '../../settings.js';
import { openTransport } from '../../assembly/open-transport.js';
import { settingOptions, settingsFromFlags } from '../setting-flags.js';
import { parse, readStdin, UsageError } from '../args.js';
import type { Command, CommandIo } from '../command.js';

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

type StoreKind = 'directory' | 'trustgraph' | 'pulsar';

interface Opened {
  readonly store: ConfigStore;
  readonly where: string;
  /** Remote stores are checked without this machine's plugin environment. */
  readonly portable: boolean;
  close(): Promise<void>;
}

async function openStore(kind: StoreKind, values: Record<string, string | boolean | undefined>, io: CommandIo, settings: Settings): Promise<Opened> {
  const workspace = (values['workspace'] as string | undefined) ?? io.env['TRUSTGRAPH_WORKSPACE'] ?? 'default';
  if (kind === 'directory') {
    if (workspace !== 'default') throw new UsageError(`workspace "${workspace}": the directory store has only the "default" workspace`);
    const dir = (values['config-dir'] as string | undefined) ?? settings.configDir;
    return { store: new DirectoryConfigStore(dir), where: dir, portable: values['static'] === true, close: async () => undefined };
  }
  if (kind === 'trustgraph') {
    const url = (values['api-url'] as string | undefined) ?? io.env['TRUSTGRAPH_URL'] ?? 'http://localhost:8888/';
    const api = new GatewayConfigApi(url, (values['token'] as string | undefined) ?? io.env['TRUSTGRAPH_TOKEN']);
    return { store: new TrustGraphConfigStore(api, workspace), where: `${api.description}, workspace ${workspace}`, portable: true, close: () => api.close() };
  }
  const log = createLogger({ level: 'warn', pretty: false });
  const transport = await openTransport({ ...settings, transport: settings.transport === 'memory' ? 'auto' : settings.transport }, log, io.signal);
  const api = new BrokerConfigApi(transport, log, { queues: settings.configQueues });
  return {
    store: new TrustGraphConfigStore(api, workspace),
    where: `${api.description}, workspace ${workspace}`,
    portable: true,
    close: async () => {
      await api.close();
      await transport.close();
    },
  };
}

function storeKind(values: Record<string, string | boolean | undefined>): StoreKind {
  const named = values['store'] as string | undefined;
  if (named !== undefined && named !== 'directory' && named !== 'trustgraph' && named !== 'pulsar') throw new UsageError(`--store ${named}: use directory, trustgraph or pulsar`);
  const implied: StoreKind | undefined = values['api-url'] ? 'trustgraph' : values['pulsar-url'] ? 'pulsar' : undefined;
  if (named && implied && named !== implied) throw new UsageError(`--store ${named} contradicts ${implied === 'trustgraph' ? '--api-url' : '--pulsar-url'}`);
  return (named as StoreKind | undefined) ?? implied ?? 'directory';
}

/**
 * The catalog as it would be after `change`, validated; the problems, or none. Items that
 * are not descriptors do not take part.
 */
async function wouldBreak(o: Opened, change: (entries: ConfigEntry[]) => ConfigEntry[], io: CommandIo, settings: Settings): Promise<readonly string[]> {
  const entries = change(await o.store.entries(DESCRIPTOR_TYPES)).filter((e) => DESCRIPTOR_TYPES.includes(e.type));
  try {
    await buildCatalog(
      entries,
      defaultRegistry(),
      { log: createLogger({ level: 'silent' }), configDir: settings.configDir, secrets: loadSecrets(io.env, settings.secretsFile), settings: settings.pluginSettings },
      // Not portable only for a directory store: the operator's own files, on this machine.
      o.portable ? { portable: true } : { policy: new ExecPolicy('directory', settings.execRules) },
    );
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

function parseValue(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

export const configCommand: Command = {
  name: 'config',
  summary: 'put, get, list, delete or import descriptors (tg-put-config-item flags)',
  help: HELP,
  async run(io) {
    const { values, positionals } = parse(io.argv, {
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
    });
    const op = positionals[0];
    if (values.help || !op) {
      io.stdout.write(HELP);
      return values.help ? 0 : 2;
    }
    if (!['put', 'get', 'list', 'delete', 'import'].includes(op)) throw new UsageError(`unknown config operation "${op}" (put, get, list, delete, import)`);
    const { settings } = settingsFromFlags(io.env, values);
    const kind = storeKind(values);
    const type = values.type;
    const needType = (): string => {
      if (!type) throw new UsageError('--type is required');
      return type;
    };
    const needKey = (): string => {
      if (!values.key) throw new UsageError('--key is required');
      return values.key;
    };
    // Check the arguments before anything is opened.
    let items: ConfigItem[] = [];
    if (op === 'import') {
      const dir = positionals[1];
      if (!dir) throw new UsageError('import needs the directory to read');
      const found = await new DirectoryConfigStore(dir).entries(DESCRIPTOR_TYPES);
      const broken = found.filter((e) => e.error);
      if (broken.length > 0) throw new UsageError(`not imported: ${broken.map((e) => `${e.source}: ${e.error}`).join('; ')}`);
      if (found.length === 0) throw new UsageError(`${dir} holds no tool-service or tool descriptors (<dir>/tool-service/*.json, <dir>/tool/*.json)`);
      items = found.map((e) => ({ type: e.type, key: e.key, value: JSON.stringify(e.value) }));
    } else if (op === 'put') {
      const t = needType();
      const key = needKey();
      if ((values.value === undefined) === !values.stdin) throw new UsageError('give exactly one of --value and --stdin');
      const text = values.value ?? (await readStdin(io.stdin));
      parseValue(text, 'the value');
      items = [{ type: t, key, value: text }];
    } else {
      needType();
      if (op !== 'list') needKey();
    }

    const opened = await openStore(kind, values, io, settings);
    try {
      switch (op) {
        case 'list':
          for (const k of await opened.store.keys(type!)) io.stdout.write(`${k}\n`);
          return 0;
        case 'get': {
          const e = await opened.store.get(type!, values.key!);
          if (!e) {
            io.stderr.write(`no ${type} item with key ${values.key}\n`);
            return 1;
          }
          if (e.error) throw new UsageError(`${e.source}: ${e.error}`);
          io.stdout.write(`${JSON.stringify(e.value, null, 2)}\n`);
          return 0;
        }
        case 'delete': {
          if (!values.force) {
            const problems = await wouldBreak(opened, (es) => es.filter((e) => !(e.type === type && e.key === values.key)), io, settings);
            if (problems.length > 0) return refuse(io, problems, 'deleted');
          }
          const found = await opened.store.delete(type!, values.key!);
          if (!found) io.stderr.write(`no ${type} item with key ${values.key}\n`);
          return found ? 0 : 1;
        }
        default: {
          if (!values.force) {
            const problems = await wouldBreak(
              opened,
              (es) => [
                ...es.filter((e) => !items.some((i) => i.type === e.type && i.key === e.key)),
                ...items.map((i) => ({ type: i.type, key: i.key, value: JSON.parse(i.value) as unknown, source: `${i.type}/${i.key} (new value)` })),
              ],
              io,
              settings,
            );
            if (problems.length > 0) return refuse(io, problems, 'written');
          }
          await opened.store.put(items);
          if (op === 'import') io.stdout.write(`${items.length} item(s) put into ${opened.where}\n`);
          return 0;
        }
      }
    } finally {
      await opened.close();
    }
  },
};

function refuse(io: CommandIo, problems: readonly string[], what: string): number {
  io.stderr.write(`not ${what}: the catalog would not validate (--force writes anyway)\n`);
  for (const p of problems) io.stderr.write(`  ${p}\n`);
  return 1;
}
