import type { Logger } from 'pino';
import { isAbsolute, join, resolve } from 'node:path';
import { realpath } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UnknownToolError } from '../../errors.js';
import type { Execution } from '../../policy/exec-policy.js';
import { observationText } from '../../envelope/response.js';
import { isAsyncIterable, type Observation, type Plugin, type PluginFactory, type ToolCall, type ToolWith } from '../plugin.js';
import { BUILTIN_TOOLS } from './builtin/index.js';
import { descriptorDisagreements } from './descriptor-agreement.js';
import { importModuleFile, isTypeScript } from './module-loader.js';
import { moduleSchemas, type ModuleOptions, type ModuleToolOptions } from './module-options.js';
import { typeErrors } from './type-check.js';
import type { ModuleTool } from './module-tool.js';
import type { ModuleToolContext } from './tool-context.js';
import type { Parameter } from '../../arguments/parameter.js';
import { isTypedTool, parseArguments, typedToolParameters, typedToolsOf, type TypedTool } from './typed-tool.js';

/**
 * The file a module that is not builtin names, found as `import` would find it, without
 * importing anything: a path from the config directory, or a package as the config directory
 * would import it (its node_modules, or a parent's), not as toolwire's own install would: the
 * operator's tools live with the operator's descriptors. Symbolic links are followed, so the
 * exec policy rules on the file that runs. Throws when a package cannot be found.
 */
export async function moduleFile(module: string, configDir: string): Promise<string> {
  let path: string;
  if (module.startsWith('.') || isAbsolute(module)) {
    path = resolve(configDir, module);
  } else {
    // Imported on use: a worker whose modules are builtin or paths never holds it (docs/benchmarks-rationale.md).
    const { resolve: resolveImport } = await import('import-meta-resolve');
    try {
      path = fileURLToPath(resolveImport(module, pathToFileURL(join(resolve(configDir), 'descriptors.js')).href));
    } catch (err) {
      throw new Error(`cannot find package "${module}" from ${resolve(configDir)} (install it there, or give a path): ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  // A file that is not there stays as named: importing it fails, and says so.
  return realpath(path).catch(() => path);
}

/** What a module gives: one function, or typed tools by name. */
type Loaded =
  | { readonly kind: 'function'; readonly fn: ModuleTool }
  | { readonly kind: 'typed'; readonly tools: ReadonlyMap<string, { tool: TypedTool; exportName: string }> };

async function loadModule(moduleOptions: ModuleOptions, configDir: string): Promise<Loaded> {
  let mod: Record<string, unknown>;
  if (moduleOptions.module.startsWith('builtin:')) {
    const name = moduleOptions.module.slice('builtin:'.length);
    const load = Object.hasOwn(BUILTIN_TOOLS, name) ? BUILTIN_TOOLS[name] : undefined;
    if (!load) throw new Error(`unknown builtin module "${name}" (available: ${Object.keys(BUILTIN_TOOLS).join(', ')})`);
    mod = await load();
  } else {
    mod = await importModuleFile(await moduleFile(moduleOptions.module, configDir), moduleOptions.revision);
  }
  const value = mod[moduleOptions.export ?? 'default'];
  if (moduleOptions.export !== undefined && isTypedTool(value))
    return { kind: 'typed', tools: new Map([[value.name, { tool: value, exportName: moduleOptions.export }]]) };
  if (moduleOptions.export === undefined) {
    const typed = typedToolsOf(mod);
    if (typed.size > 0) return { kind: 'typed', tools: typed };
  }
  if (typeof value !== 'function')
    throw new Error(
      `module "${moduleOptions.module}" has no function export "${moduleOptions.export ?? 'default'}" and no typed tool (defineTool({ name, arguments, run }))`,
    );
  return { kind: 'function', fn: value as ModuleTool };
}

/** The typed tool a descriptor names: `plugin-options.tool`, else its own name; a module of one tool needs neither. */
function pickTyped(tools: ReadonlyMap<string, { tool: TypedTool }>, tool: ToolWith<ModuleToolOptions> | undefined): TypedTool | undefined {
  const name = tool?.pluginOptions.tool ?? tool?.name;
  const named = name === undefined ? undefined : tools.get(name)?.tool;
  if (named) return named;
  return tools.size === 1 && tool?.pluginOptions.tool === undefined ? tools.values().next().value?.tool : undefined;
}

/**
 * What a module tool receives. A class: `signal` and `log` are getters on its prototype, so
 * the call's AbortController and child logger are made only for a tool that reads them; an
 * object literal with getters cost about 1 µs a call (docs/benchmarks-rationale.md).
 */
class ModuleCallContext implements ModuleToolContext {
  readonly tool: string | undefined;
  readonly service: string;
  readonly requestId: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly arguments: Readonly<Record<string, unknown>>;
  declare readonly user?: string;
  readonly #call: ToolCall;

  constructor(call: ToolCall, args: Readonly<Record<string, unknown>>) {
    this.tool = call.tool?.name;
    this.service = call.service.id;
    this.requestId = call.requestId;
    this.config = call.config;
    this.arguments = args;
    if (call.user !== undefined) (this as { user?: string }).user = call.user;
    this.#call = call;
  }

  get signal(): AbortSignal {
    return this.#call.signal;
  }

  get log(): Logger {
    return this.#call.log;
  }
}

class ModulePlugin implements Plugin<ModuleToolOptions> {
  readonly kind = 'module';
  constructor(private readonly loaded: Loaded) {}

  invoke(call: ToolCall<ModuleToolOptions>): Observation {
    let out: ReturnType<ModuleTool>;
    if (this.loaded.kind === 'function') {
      out = this.loaded.fn(new ModuleCallContext(call, call.arguments));
    } else {
      const tool = pickTyped(this.loaded.tools, call.tool);
      if (!tool)
        return Promise.reject(
          new UnknownToolError(`the module has no tool ${JSON.stringify(call.tool?.name ?? '')} (it has ${[...this.loaded.tools.keys()].join(', ')})`),
        );
      let args;
      try {
        args = parseArguments(tool, call.arguments);
      } catch (err) {
        return Promise.reject(err);
      }
      out = tool.run(args, new ModuleCallContext(call, args));
    }
    if (isAsyncIterable(out)) return chunksOf(out);
    // A tool that answered synchronously is answered so: no promise to wait for.
    return isThenable(out) ? Promise.resolve(out).then(observationText) : observationText(out);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

async function* chunksOf(out: AsyncIterable<unknown>): AsyncIterable<string> {
  for await (const chunk of out) yield observationText(chunk);
}

/** In-process tools named by descriptors (never by a request). */
export const modulePluginFactory: PluginFactory<ModuleOptions, ModuleToolOptions> = {
  ...moduleSchemas,
  /** A file or package module runs its top-level code when imported, at the check already. */
  async executes(service, _tools, ctx): Promise<Execution[]> {
    const moduleOptions = service.plugin.options;
    if (moduleOptions.module.startsWith('builtin:')) return [];
    const file = await moduleFile(moduleOptions.module, ctx.configDir).catch(() => undefined);
    return [{ type: 'module', where: `${service.source}: plugin.module`, specifier: moduleOptions.module, file }];
  },
  /** The module imports, and each tool descriptor agrees with the schema of the typed tool it calls. */
  async check(service, tools, ctx) {
    const moduleOptions = service.plugin.options;
    // Under `run --watch` (a revision is set), and when asked (validate --type-check), a
    // TypeScript module is type checked first: tsx would run it with its type errors.
    if ((moduleOptions.revision !== undefined || ctx.typeCheck === true) && !moduleOptions.module.startsWith('builtin:')) {
      const file = await moduleFile(moduleOptions.module, ctx.configDir).catch(() => undefined);
      // The checker is code too: imported only from where the policy lets modules come from.
      const mayImport = async (ts: string) =>
        ctx.policy?.refuse({ type: 'module', where: `${service.source}: plugin.module`, specifier: 'typescript', file: ts }) === undefined;
      const typescript = file !== undefined && isTypeScript(file);
      const errors = typescript ? await typeErrors(file, mayImport) : undefined;
      if (errors && errors.length > 0) return errors.map((error) => `${service.source}: plugin.module: ${error}`);
      // A check asked for and not made is not a pass (run --watch goes on without one).
      if (typescript && errors === undefined && ctx.typeCheck === true) {
        return [
          `${service.source}: plugin.module: not type checked: no typescript found from ${file} (npm install --save-dev typescript in its project), or TOOLWIRE_MODULE_ROOTS does not hold it`,
        ];
      }
    }
    let loaded: Loaded;
    try {
      loaded = await loadModule(moduleOptions, ctx.configDir);
    } catch (err) {
      return [`${service.source}: plugin.module: ${(err as Error).message}`];
    }
    if (loaded.kind === 'function')
      return tools
        .filter((tool) => tool.argumentsFromModule)
        .map(
          (tool) =>
            `${tool.source}: arguments: "from-module" needs a typed tool (defineTool), and ${moduleOptions.module} exports a function: write the arguments`,
        );
    return tools.flatMap((tool) => {
      const typed = pickTyped(loaded.tools, tool);
      if (!typed)
        return [
          `${tool.source}: plugin-options.tool: the module has no tool ${JSON.stringify(tool.pluginOptions.tool ?? tool.name)} (it has ${[...loaded.tools.keys()].join(', ')})`,
        ];
      // Arguments from the module cannot disagree with it; written ones are held to it.
      return tool.argumentsFromModule ? [] : descriptorDisagreements(typed, tool).map((problem) => `${tool.source}: arguments: ${problem}`);
    });
  },
  /** The argument declarations of each `"from-module"` tool, from its typed tool's schema (the module as the check imported it). */
  async toolParameters(service, tools, ctx) {
    const loaded = await loadModule(service.plugin.options, ctx.configDir);
    const parameters = new Map<string, readonly Parameter[]>();
    if (loaded.kind === 'function') return parameters;
    for (const tool of tools) {
      const typed = tool.argumentsFromModule ? pickTyped(loaded.tools, tool) : undefined;
      if (typed) parameters.set(tool.name, typedToolParameters(typed));
    }
    return parameters;
  },
  async create(service, ctx) {
    return new ModulePlugin(await loadModule(service.plugin.options, ctx.configDir));
  },
};
