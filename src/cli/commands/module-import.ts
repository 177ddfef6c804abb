import { isAbsolute, relative, resolve, sep } from 'node:path';
import { moduleFile } from '../../plugins/module/module-plugin.js';
import { importModuleFile } from '../../plugins/module/module-loader.js';
import { typedToolDescriptors } from '../../plugins/module/module-descriptors.js';
import { typedToolsOf } from '../../plugins/module/typed-tool.js';
import { commandGroup } from '../command-group.js';
import { defineCommand, type Command } from '../command.js';
import { UsageError } from '../args.js';
import { DESCRIPTOR_FLAGS, importedService, listFlag, writeDescriptors } from '../write-descriptors.js';

const IMPORT_HELP = `Usage: toolwire module import FILE --service ID [options]

Imports FILE (.ts, .mts, .js or .mjs: its top-level code runs) and writes a tool-service
descriptor for it and a tool descriptor per typed tool it exports (defineTool({ name,
description, arguments: z.object({...}), run })): name, description, and arguments from the
zod schema (types, required, enums, defaults, descriptions; nested objects and arrays keep
their JSON Schema). Ready for 'toolwire config import DIR', which puts them in any store.
With --from-module the descriptors say "arguments": "from-module" instead: the worker reads
the schema when it loads the module, so a schema edit needs no import again (for a worker's
own config directory; agents that read a shared store need the arguments written).

      --service ID         the tool-service id (required)
      --module-path P      the service's plugin.module as written (default: FILE relative
                           to --out, which is where a worker will read it from; without
                           --out, as given)
      --request-queue Q    default non-persistent://tg/request/<id>
      --response-queue Q   default non-persistent://tg/response/<id>
      --prefix P           tool names are P<tool name> (default none)
      --include LIST       only these tools (comma-separated)
      --exclude LIST       all but these
      --from-module        "arguments": "from-module" rather than the arguments written
      --out DIR            write DIR/tool-service/<id>.json and DIR/tool/<name>.json
                           (default: print them as one JSON document)
`;

/** A module path as a worker reading `configDir` resolves it: relative, starting with `./` or `../`. */
function relativeModulePath(file: string, configDir: string): string {
  const path = relative(resolve(configDir), resolve(file)).split(sep).join('/');
  return path.startsWith('../') ? path : `./${path}`;
}

const moduleImportCommand: Command = defineCommand({
  name: 'import',
  summary: "tool descriptors from a module's typed tools (defineTool)",
  help: IMPORT_HELP,
  flags: { ...DESCRIPTOR_FLAGS, 'module-path': { type: 'string' }, 'from-module': { type: 'boolean' } },
  async run(io, { values, positionals }) {
    const id = values.service;
    if (!id) throw new UsageError('--service is required');
    if (positionals.length !== 1) throw new UsageError('give one module FILE');
    // A path, never a package name: `tools/x.ts` is `./tools/x.ts`.
    const given = positionals[0]!.startsWith('.') || isAbsolute(positionals[0]!) ? positionals[0]! : `./${positionals[0]!}`;
    const file = await moduleFile(given, process.cwd());
    let typed;
    try {
      typed = typedToolsOf(await importModuleFile(file));
    } catch (err) {
      throw new UsageError(`cannot import ${given}: ${(err as Error).message}`);
    }
    if (typed.size === 0) throw new UsageError(`${given} exports no typed tool (defineTool({ name, description, arguments, run }))`);
    const include = listFlag(values.include);
    const exclude = listFlag(values.exclude);
    const picked = [...typed.values()].map((typedTool) => typedTool.tool).filter((tool) => (!include || include.has(tool.name)) && !exclude?.has(tool.name));
    const module = values['module-path'] ?? (values.out ? relativeModulePath(file, values.out) : given);
    const service = importedService(id, values, 'tool', { kind: 'module', module });
    await writeDescriptors(
      io,
      values.out,
      service,
      typedToolDescriptors(picked, { service: id, prefix: values.prefix ?? '', argumentsFromModule: values['from-module'] === true }),
      typed.size,
    );
    return 0;
  },
});

export const moduleCommand: Command = commandGroup('module', 'typed tools in TypeScript or JavaScript: write their descriptors (import)', [
  moduleImportCommand,
]);
