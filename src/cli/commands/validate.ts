import { buildCatalog } from '../../assembly/build-catalog.js';
import { credentialProblems } from '../../assembly/check-credentials.js';
import { readWorkerSettings } from '../../assembly/worker-settings.js';
import { DirectoryConfigStore } from '../../config/directory-store.js';
import { ConfigError } from '../../errors.js';
import { createLogger } from '../../logging.js';
import { defaultRegistry } from '../../plugins/default-registry.js';
import { ExecPolicy } from '../../policy/exec-policy.js';
import { loadSecrets } from '../../secrets.js';
import { toolInputSchema } from '../../arguments/json-schema.js';
import { UsageError } from '../args.js';
import { defineCommand, type Command } from '../command.js';

export const validateCommand: Command = defineCommand({
  name: 'validate',
  summary: 'check every descriptor in a config directory',
  help: `Usage: toolwire validate [dir] [--schema] [--static] [--type-check] [--check-credentials]

Checks every tool-service and tool descriptor in dir (default: $TOOLWIRE_CONFIG_DIR or
./config): schemas, topic names, services named by tools, required config values, duplicate
names, plugins and their options, required hidden parameters, credential references.
Prints every problem with its file and field, and exits 1 if there is any.

The plugins' own checks run code and reach out: a module plugin's file is imported (its
top-level code runs), an MCP server is connected to (a stdio one is started), a Dify daemon
may be asked. --static leaves them out and checks only what the descriptors say.
What may run is bounded as for a worker on a directory (TOOLWIRE_ALLOW_COMMANDS,
TOOLWIRE_MODULE_ROOTS...; docs/security.md), before any check runs.

  --schema             also print each tool's model-facing JSON Schema
  --static             check without executing modules or contacting any plugin's backend
  --type-check         also type check each TypeScript module (.ts, .mts) before importing it,
                       with the typescript and tsconfig.json of its own project, as
                       run --watch does: a type error, or no typescript to check with, is a
                       problem. Off by default: a TypeScript program takes seconds to build
  --check-credentials  also ask each Dify plugin daemon whether the services' credentials are
                       good (tool/validate_credentials: the plugin's own check, which calls
                       its upstream); a refused credential is a problem
`,
  flags: { schema: { type: 'boolean' }, static: { type: 'boolean' }, 'type-check': { type: 'boolean' }, 'check-credentials': { type: 'boolean' } },
  async run(io, { values, positionals }) {
    if (values.static && values['check-credentials']) throw new UsageError('--static and --check-credentials do not go together');
    if (values.static && values['type-check']) throw new UsageError('--static checks no module: --type-check needs the plugins checked');
    const settings = readWorkerSettings(io.env);
    const dir = positionals[0] ?? settings.configDir;
    const log = createLogger({ level: 'warn', pretty: false });
    const secrets = loadSecrets(io.env, settings.secretsFile);
    try {
      const entries = await new DirectoryConfigStore(dir).entries();
      const registry = defaultRegistry();
      const ctx = { log, configDir: dir, secrets, settings: settings.pluginSettings, typeCheck: values['type-check'] === true };
      // A directory: the operator's own, checked as a worker reading it would.
      const catalog = await buildCatalog(
        entries,
        registry,
        ctx,
        values.static ? { portable: true } : { policy: new ExecPolicy('directory', settings.execRules) },
      );
      if (values['check-credentials']) {
        const problems = await credentialProblems(catalog, registry, ctx, 60_000, io.signal);
        if (problems.length > 0) throw new ConfigError(problems);
      }
      io.stdout.write(
        `${dir}: ${catalog.services.size} tool-services, ${catalog.tools.size} tools: OK${values.static ? ' (static: plugins not checked)' : ''}\n`,
      );
      if (values.schema) {
        const out = Object.fromEntries([...catalog.tools.values()].map((tool) => [tool.name, toolInputSchema(tool.parameters)]));
        io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      }
      return 0;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      io.stderr.write(`${dir}: ${err.problems.length} problem(s)\n`);
      for (const problem of err.problems) io.stderr.write(`  ${problem}\n`);
      return 1;
    }
  },
});
