import { buildCatalog } from '../../catalog/build-catalog.js';
import { DirectoryConfigStore, type ConfigEntry } from '../../catalog/config-store.js';
import { ConfigError } from '../../errors.js';
import { createLogger } from '../../logging.js';
import { defaultRegistry } from '../../plugins/default-registry.js';
import { loadSecrets } from '../../secrets.js';
import { readSettings } from '../../settings.js';
import { parse, readStdin, UsageError } from '../args.js';
import type { Command } from '../command.js';

const HELP = `Usage: toolwire config <put|get|list|delete> --type T [--key K] [options]

Manages descriptors in the config directory, with the flags of TrustGraph's
tg-put-config-item / tg-get-config-item / tg-list-config-items / tg-delete-config-item.

  put     --type T --key K (--value JSON | --stdin)   write an item; refused if the
                                                      catalog would not validate
  get     --type T --key K                            print an item's JSON
  list    --type T                                    print the keys of a type
  delete  --type T --key K                            remove an item

Options:
  -t, --type T          config type: tool-service or tool (others are stored as given)
  -k, --key K           config key (for a tool-service, its id)
  -v, --value JSON      the item's value
      --stdin           read the value from standard input
  -w, --workspace W     TrustGraph workspace; the directory store has only "default"
  -d, --config-dir DIR  default $TOOLWIRE_CONFIG_DIR or ./config
      --force           put even if the catalog would not validate
`;

export const configCommand: Command = {
  name: 'config',
  summary: 'put, get, list or delete descriptors (tg-put-config-item flags)',
  help: HELP,
  async run(io) {
    const { values, positionals } = parse(io.argv, {
      type: { type: 'string', short: 't' },
      key: { type: 'string', short: 'k' },
      value: { type: 'string', short: 'v' },
      stdin: { type: 'boolean' },
      workspace: { type: 'string', short: 'w' },
      'config-dir': { type: 'string', short: 'd' },
      force: { type: 'boolean' },
    });
    const op = positionals[0];
    if (values.help || !op) {
      io.stdout.write(HELP);
      return values.help ? 0 : 2;
    }
    if (values.workspace && values.workspace !== 'default') throw new UsageError(`workspace "${values.workspace}": the directory store has only the "default" workspace`);
    const settings = readSettings(io.env);
    const dir = values['config-dir'] ?? settings.configDir;
    const store = new DirectoryConfigStore(dir);
    const type = values.type;
    if (!type) throw new UsageError('--type is required');
    const needKey = () => {
      if (!values.key) throw new UsageError('--key is required');
      return values.key;
    };
    switch (op) {
      case 'list':
        for (const k of await store.keys(type)) io.stdout.write(`${k}\n`);
        return 0;
      case 'get': {
        const e = await store.get(type, needKey());
        if (!e) {
          io.stderr.write(`no ${type} item with key ${values.key}\n`);
          return 1;
        }
        if (e.error) throw new UsageError(`${e.source}: ${e.error}`);
        io.stdout.write(`${JSON.stringify(e.value, null, 2)}\n`);
        return 0;
      }
      case 'delete': {
        const found = await store.delete(type, needKey());
        if (!found) io.stderr.write(`no ${type} item with key ${values.key}\n`);
        return found ? 0 : 1;
      }
      case 'put': {
        const key = needKey();
        if ((values.value === undefined) === !values.stdin) throw new UsageError('give exactly one of --value and --stdin');
        const text = values.value ?? (await readStdin(io.stdin));
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (err) {
          throw new UsageError(`the value is not valid JSON: ${(err as Error).message}`);
        }
        if (!values.force) {
          // Check the catalog as it would be, before writing anything.
          const entries: ConfigEntry[] = (await store.entries()).filter((e) => !(e.type === type && e.key === key));
          entries.push({ type, key, value, source: `${type}/${key} (new value)` });
          try {
            await buildCatalog(entries, defaultRegistry(), {
              log: createLogger({ level: 'silent' }),
              configDir: dir,
              secrets: loadSecrets(io.env, settings.secretsFile),
              settings: settings.pluginSettings,
            });
          } catch (err) {
            if (!(err instanceof ConfigError)) throw err;
            io.stderr.write(`not written: the catalog would not validate (--force writes anyway)\n`);
            for (const p of err.problems) io.stderr.write(`  ${p}\n`);
            return 1;
          }
        }
        await store.put(type, key, text);
        return 0;
      }
      default:
        throw new UsageError(`unknown config operation "${op}" (put, get, list, delete)`);
    }
  },
};
