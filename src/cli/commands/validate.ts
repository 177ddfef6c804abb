import { buildCatalog } from '../../catalog/build-catalog.js';
import { DirectoryConfigStore } from '../../config/directory-store.js';
import { ConfigError } from '../../errors.js';
import { createLogger } from '../../logging.js';
import { defaultRegistry } from '../../plugins/default-registry.js';
import { loadSecrets } from '../../secrets.js';
import { readSettings } from '../../settings.js';
import { toolInputSchema } from '../../tools/json-schema.js';
import { parse } from '../args.js';
import type { Command } from '../command.js';

export const validateCommand: Command = {
  name: 'validate',
  summary: 'check every descriptor in a config directory',
  help: `Usage: toolwire validate [dir] [--schema]

Checks every tool-service and tool descriptor in dir (default: $TOOLWIRE_CONFIG_DIR or
./config): schemas, topic names, services named by tools, required config values, duplicate
names, plugins and their options, required hidden parameters, credential references.
Prints every problem with its file and field, and exits 1 if there is any.

  --schema   also print each tool's model-facing JSON Schema
`,
  async run(io) {
    const { values, positionals } = parse(io.argv, { schema: { type: 'boolean' } });
    if (values.help) {
      io.stdout.write(validateCommand.help);
      return 0;
    }
    const settings = readSettings(io.env);
    const dir = positionals[0] ?? settings.configDir;
    const log = createLogger({ level: 'warn', pretty: false });
    const secrets = loadSecrets(io.env, settings.secretsFile);
    try {
      const entries = await new DirectoryConfigStore(dir).entries();
      const catalog = await buildCatalog(entries, defaultRegistry(), { log, configDir: dir, secrets, settings: settings.pluginSettings });
      io.stdout.write(`${dir}: ${catalog.services.size} tool-services, ${catalog.tools.size} tools: OK\n`);
      if (values.schema) {
        const out = Object.fromEntries([...catalog.tools.values()].map((t) => [t.name, toolInputSchema(t.parameters)]));
        io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      }
      return 0;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      io.stderr.write(`${dir}: ${err.problems.length} problem(s)\n`);
      for (const p of err.problems) io.stderr.write(`  ${p}\n`);
      return 1;
    }
  },
};
