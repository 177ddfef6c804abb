import { errorMessage } from '../../errors.js';
import { isPlainObject } from '../../plain-object.js';
import { runtimeParameters } from '../../plugins/dify-daemon/runtime-parameters.js';
import { buildDescriptor, i18n, InvalidPluginOptionsError } from '../../plugins/dify-common/tool-declaration.js';
import type { DifyOptions } from '../../plugins/dify-common/dify-tool-options.js';
import { loadSecrets } from '../../secrets.js';
import { CommandLineError, UsageError, type Flags, type FlagValues } from '../args.js';
import { defineCommand, type Command, type CommandIo } from '../command.js';
import { commandGroup } from '../command-group.js';
import { readYamlMapping } from '../read-yaml.js';
import { isStrategyDeclaration } from '../../plugins/dify-agent/strategy-declaration.js';
import { importStrategies, STRATEGY_CONFIG_PARAM, strategyServicePlugin } from './dify-import-strategy.js';
import { importedService, listFlag, writeDescriptors } from '../write-descriptors.js';

const HELP = `Usage:
  toolwire dify import <tool.yaml> --service <id> [options]
  toolwire dify import --from-daemon --service <id> --provider <org/plugin/provider> --tool <name> [options]
  toolwire dify import <plugin>/manifest.yaml --service <id> --strategy <name>[,<name>...] [options]
  toolwire dify import <plugin>/strategies/<name>.yaml --service <id> [options]

Build a toolwire tool descriptor for a Dify plugin tool and print it as JSON, ready for
  toolwire dify import tools/search.yaml --service dify-search | toolwire config put --type tool --key search --stdin

The descriptor carries the tool's argument declarations (Dify's types, forms, defaults and
options), the JSON Schema a model sees ("input-schema": llm parameters only, file parameters
left out, Dify's non-JSON-Schema types mapped), and "plugin-options" for the dify-daemon and
dify-slim plugins. Parameters that must be filled by configuration (form parameters that are
required and have no default) are listed on stderr: give them "runtime-parameters".

Sources:
  <tool.yaml>                  a plugin's tool declaration (identity, description, parameters)
  <manifest.yaml>, <strategy.yaml>
                               an agent-strategy plugin (plugins.agent_strategies) or one of its
                               strategies/*.yaml: a descriptor for the dify-agent plugin (query,
                               context if declared; plugin_id, provider, strategy, maximum_iterations).
                               Several strategies (--strategy a,b) make a tool-service too, whose
                               config param "strategy" tells them apart: each tool's value is its
                               strategy's name
  --from-daemon                ask the plugin daemon (get_runtime_parameters) instead; uses
                               DIFY_DAEMON_URL, DIFY_DAEMON_KEY and DIFY_TENANT_ID from the environment

Options:
  --service <id>               the tool-service the tool belongs to (required)
  --name <name>                the tool's name for agents (default: the declaration's name)
  --description <text>         the tool's description (default: the declaration's llm description)
  --provider <org/plugin/provider>
  --plugin-id <org/plugin>     (implied by a three-part --provider)
  --plugin-unique-identifier <author/name:version@checksum>   for dify-slim
  --tool <name>                the tool's name in the plugin (default: the declaration's name)
  --strategy <name>[,<name>...]  which strategies of a strategy plugin's manifest
  --out <dir>                  strategies only: write their tool-service and tools,
                               <dir>/tool-service/<id>.json and <dir>/tool/<name>.json (default
                               with several: print them as one JSON document)
  --request-queue <topic>      the strategies' tool-service: default non-persistent://tg/request/<id>
  --response-queue <topic>     the strategies' tool-service: default non-persistent://tg/response/<id>
  --credential <name>=<ref>    a credential reference, env:NAME or file:key (repeatable)
  --credential-type <type>     api-key, oauth2 or unauthorized
  --config <name>=<value>      a config-param value of the service (repeatable)
  --secrets-file <path>        JSON secrets for file: references (with --from-daemon)
  --lang <code>                language of labels and descriptions (default en_US)
  -h, --help                   this text

Exit codes: 0 printed, 1 failed, 2 bad usage.
`;

const FLAGS = {
  service: { type: 'string' },
  name: { type: 'string' },
  description: { type: 'string' },
  provider: { type: 'string' },
  'plugin-id': { type: 'string' },
  'plugin-unique-identifier': { type: 'string' },
  tool: { type: 'string' },
  strategy: { type: 'string' },
  credential: { type: 'string', multiple: true },
  'credential-type': { type: 'string' },
  config: { type: 'string', multiple: true },
  'from-daemon': { type: 'boolean' },
  'secrets-file': { type: 'string' },
  lang: { type: 'string' },
  out: { type: 'string' },
  'request-queue': { type: 'string' },
  'response-queue': { type: 'string' },
} as const satisfies Flags;

type ImportValues = FlagValues<typeof FLAGS>;

/** What a tool's declaration gives its descriptor: the parameters, and a name and description when it says them. */
interface ToolDeclaration {
  readonly name: string | undefined;
  readonly description: string | undefined;
  readonly parameters: unknown[];
}

function pairs(flagValues: readonly string[] | undefined, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of flagValues ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`${what} must be <name>=<value>, got ${JSON.stringify(pair)}`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/** The tool's parameters as the plugin daemon gives them (get_runtime_parameters). */
async function declarationFromDaemon(io: CommandIo, values: ImportValues, credentials: Record<string, string>): Promise<ToolDeclaration> {
  const provider = values.provider;
  const segments = provider?.split('/') ?? [];
  const pluginId = values['plugin-id'] ?? (segments.length === 3 ? `${segments[0]}/${segments[1]}` : undefined);
  if (!provider || !pluginId || !values.tool) throw new UsageError('--from-daemon needs --provider (org/plugin/provider, or with --plugin-id) and --tool');
  const daemon = { url: io.env['DIFY_DAEMON_URL'], key: io.env['DIFY_DAEMON_KEY'], tenantId: io.env['DIFY_TENANT_ID'] };
  if (!daemon.url || !daemon.key || !daemon.tenantId)
    throw new UsageError('--from-daemon needs DIFY_DAEMON_URL, DIFY_DAEMON_KEY and DIFY_TENANT_ID in the environment');
  const parameters = await runtimeParameters(
    { url: daemon.url.replace(/\/+$/, ''), key: daemon.key, tenantId: daemon.tenantId },
    loadSecrets(io.env, values['secrets-file']),
    { pluginId, provider, tool: values.tool, credentials },
    io.signal,
  );
  return { name: values.tool, description: undefined, parameters };
}

/** A plugin's tool YAML: identity.name, the llm description (else the human one in `lang`), the parameters. */
function declarationFromYaml(file: string, doc: Record<string, unknown>, lang: string): ToolDeclaration {
  if (Array.isArray(doc['tools']) && !Array.isArray(doc['parameters'])) {
    throw new UsageError(`${file} is a provider declaration; give one of its tool files: ${doc['tools'].map(String).join(', ')}`);
  }
  const identity = isPlainObject(doc['identity']) ? doc['identity'] : {};
  const description = isPlainObject(doc['description']) ? doc['description'] : {};
  return {
    name: typeof identity['name'] === 'string' ? identity['name'] : undefined,
    description: (typeof description['llm'] === 'string' && description['llm']) || i18n(description['human'], lang),
    parameters: Array.isArray(doc['parameters']) ? doc['parameters'] : [],
  };
}

/** An agent-strategy plugin's manifest, or one of its strategy files: a dify-agent tool, not a plugin tool. */
function isStrategySource(doc: Record<string, unknown>): boolean {
  return isStrategyDeclaration(doc) || (isPlainObject(doc['plugins']) && Array.isArray(doc['plugins']['agent_strategies']));
}

/** One strategy's tool descriptor; several (or any with --out) as a service that tells them apart, and their tools. */
async function printStrategy(io: CommandIo, file: string, doc: Record<string, unknown>, values: ImportValues, service: string, lang: string): Promise<number> {
  const strategies = listFlag(values.strategy);
  const imported = await importStrategies(file, doc, {
    service,
    lang,
    ...(strategies ? { strategies: [...strategies] } : {}),
    ...(values.name ? { name: values.name } : {}),
    ...(values.description ? { description: values.description } : {}),
    ...(values['plugin-id'] ? { pluginId: values['plugin-id'] } : {}),
    ...(values.provider ? { provider: values.provider } : {}),
  });
  for (const note of imported.notes) io.stderr.write(`${note}\n`);
  const [only] = imported.descriptors;
  if (imported.descriptors.length === 1 && only && values.out === undefined) {
    io.stdout.write(`${JSON.stringify(only, null, 2)}\n`);
    return 0;
  }
  const serviceDescriptor = importedService(service, values, STRATEGY_CONFIG_PARAM, strategyServicePlugin(imported));
  await writeDescriptors(io, values.out, serviceDescriptor, imported.descriptors, imported.offered);
  return 0;
}

/** The dify-daemon and dify-slim plugins' options: the plugin's `tool`, and what the flags say. */
function pluginOptionsOf(values: ImportValues, tool: string, credentials: Record<string, string>): DifyOptions {
  return {
    ...(values['plugin-id'] ? { plugin_id: values['plugin-id'] } : {}),
    ...(values['plugin-unique-identifier'] ? { plugin_unique_identifier: values['plugin-unique-identifier'] } : {}),
    ...(values.provider ? { provider: values.provider } : {}),
    tool,
    ...(values['credential-type'] ? { credential_type: values['credential-type'] as DifyOptions['credential_type'] } : {}),
    ...(Object.keys(credentials).length > 0 ? { credentials } : {}),
  };
}

const importCommand = defineCommand({
  name: 'import',
  summary: 'Build a tool descriptor from a Dify plugin tool declaration',
  help: HELP,
  flags: FLAGS,
  async run(io, { values, positionals }) {
    const service = values.service;
    if (!service) throw new UsageError('--service is required');
    const lang = values.lang ?? 'en_US';
    const credentials = pairs(values.credential, '--credential');
    const config = pairs(values.config, '--config');

    let declaration: ToolDeclaration;
    if (values['from-daemon']) {
      if (positionals.length > 0) throw new UsageError('give a YAML file or --from-daemon, not both');
      declaration = await declarationFromDaemon(io, values, credentials);
    } else {
      if (positionals.length !== 1) throw new UsageError('give exactly one tool YAML file');
      const file = positionals[0] as string;
      const doc = await readYamlMapping(file);
      if (isStrategySource(doc)) return printStrategy(io, file, doc, values, service, lang);
      declaration = declarationFromYaml(file, doc, lang);
    }

    const name = values.name ?? declaration.name;
    if (!name) throw new UsageError('the declaration has no identity.name; give --name');
    const { descriptor, needsRuntime } = buildDescriptor({
      name,
      description: values.description ?? declaration.description ?? '',
      service,
      parameters: declaration.parameters,
      pluginOptions: pluginOptionsOf(values, values.tool ?? declaration.name ?? name, credentials),
      config,
      lang,
    });
    if (needsRuntime.length > 0) {
      io.stderr.write(`note: give "runtime-parameters" values for: ${needsRuntime.join(', ')} (required, filled by configuration, no default)\n`);
    }
    io.stdout.write(`${JSON.stringify(descriptor, null, 2)}\n`);
    return 0;
  },
});

/**
 * `toolwire dify import`: a Dify tool declaration as a toolwire tool descriptor. It names
 * itself in every error, and points a usage error at --help on a line of its own.
 */
export const difyImportCommand: Command = {
  ...importCommand,
  async run(io: CommandIo): Promise<number> {
    try {
      return await importCommand.run(io);
    } catch (err) {
      const usage = err instanceof UsageError || err instanceof InvalidPluginOptionsError;
      const message = err instanceof CommandLineError ? err.reason : errorMessage(err);
      io.stderr.write(`toolwire dify import: ${message}\n${usage ? 'Run with --help for usage.\n' : ''}`);
      return usage ? 2 : 1;
    }
  },
};

/** `toolwire dify ...`: Dify plugin chores. */
export const difyCommand: Command = commandGroup('dify', 'Dify plugin chores: build tool descriptors (import)', [difyImportCommand]);
