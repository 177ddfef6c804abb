import { isAbsolute, normalize } from 'node:path';
import { isCidr } from '../net/address-guard.js';
import { splitList } from './name-patterns.js';

/**
 * The operator's settings that bound what descriptors may make a worker execute, and where
 * they may make it connect. They are read from the worker's own environment, never from
 * config: a config writer cannot widen them.
 */
export const ExecSetting = {
  /** Plugin kinds descriptors may use. */
  Plugins: 'TOOLWIRE_ALLOW_PLUGINS',
  /** Commands an MCP stdio service may start: absolute paths or bare names. */
  Commands: 'TOOLWIRE_ALLOW_COMMANDS',
  /** Directories a module plugin may import files from (builtin: modules are always allowed). */
  ModuleRoots: 'TOOLWIRE_MODULE_ROOTS',
  /** Dify plugins (`author/name:version@checksum`, or `PREFIX*`) the slim binary may run here in local mode. */
  SlimPlugins: 'TOOLWIRE_ALLOW_SLIM_PLUGINS',
  /**
   * Environment variables (names, `PREFIX*`) an MCP stdio descriptor may set for its command.
   * An allow-list: the variables that steer a loader, an interpreter or a package manager
   * (NODE_OPTIONS, LD_PRELOAD, PYTHONPATH, npm_config_registry...) are too many to deny one by one.
   */
  CommandEnv: 'TOOLWIRE_ALLOW_COMMAND_ENV',
  /** CIDRs beyond the public internet (loopback, private, link-local...) descriptors may make the worker connect to. */
  PrivateNetworks: 'TOOLWIRE_ALLOW_PRIVATE',
  /**
   * Broker namespaces (`tenant/namespace`, `tenant/*`) a service's request and response topics
   * may lie in: a descriptor makes the worker consume and publish there with its own credentials.
   */
  Namespaces: 'TOOLWIRE_ALLOW_NAMESPACES',
} as const;
export type ExecSetting = (typeof ExecSetting)[keyof typeof ExecSetting];

/** What one setting allows: anything (`*`), or only the items it lists (none for `none` or an empty value). */
export type Allowance = { readonly any: true } | { readonly any: false; readonly items: readonly string[] };

/** The operator's choices; a setting left unset is undefined and takes its config source's default. */
export interface ExecRules {
  readonly plugins?: Allowance | undefined;
  readonly commands?: Allowance | undefined;
  readonly moduleRoots?: Allowance | undefined;
  readonly slimPlugins?: Allowance | undefined;
  readonly commandEnv?: Allowance | undefined;
  readonly privateNetworks?: Allowance | undefined;
  readonly namespaces?: Allowance | undefined;
}

/** A comma-separated list; `*` for anything; empty or `none` for nothing. */
function allowance(value: string | undefined, check: (item: string) => string | undefined, setting: string, problems: string[]): Allowance | undefined {
  if (value === undefined) return undefined;
  const items = splitList(value);
  if (items.includes('*')) {
    if (items.length > 1) problems.push(`${setting}: * allows everything, so it stands alone`);
    return { any: true };
  }
  if (items.length === 1 && items[0] === 'none') return { any: false, items: [] };
  const kept: string[] = [];
  for (const item of items) {
    const problem = check(item);
    if (problem) problems.push(`${setting}: ${JSON.stringify(item)} ${problem}`);
    else kept.push(isAbsolute(item) ? normalize(item) : item);
  }
  return { any: false, items: kept };
}

/** Read the exec settings; problems name the setting and the item. */
export function readExecRules(env: Readonly<Record<string, string | undefined>>): { rules: ExecRules; problems: string[] } {
  const problems: string[] = [];
  const rules: ExecRules = {
    plugins: allowance(env[ExecSetting.Plugins], (kind) => (/^[\w.-]+$/.test(kind) ? undefined : 'is not a plugin kind'), ExecSetting.Plugins, problems),
    commands: allowance(
      env[ExecSetting.Commands],
      (command) =>
        isAbsolute(command) || !command.includes('/')
          ? undefined
          : 'is neither an absolute path nor a command name (a relative path would mean a different file in each working directory)',
      ExecSetting.Commands,
      problems,
    ),
    moduleRoots: allowance(env[ExecSetting.ModuleRoots], (dir) => (isAbsolute(dir) ? undefined : 'is not an absolute path'), ExecSetting.ModuleRoots, problems),
    slimPlugins: allowance(
      env[ExecSetting.SlimPlugins],
      (plugin) => (/\s/.test(plugin) ? 'has white space in it' : undefined),
      ExecSetting.SlimPlugins,
      problems,
    ),
    commandEnv: allowance(
      env[ExecSetting.CommandEnv],
      (name) => (/^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(name) ? undefined : 'is not a variable name (or PREFIX*)'),
      ExecSetting.CommandEnv,
      problems,
    ),
    privateNetworks: allowance(
      env[ExecSetting.PrivateNetworks],
      (cidr) => (isCidr(cidr) ? undefined : 'is not a CIDR, such as 10.0.0.0/8 or 127.0.0.1/32'),
      ExecSetting.PrivateNetworks,
      problems,
    ),
    namespaces: allowance(
      env[ExecSetting.Namespaces],
      (namespace) => (/^[A-Za-z0-9_.=-]+\/(\*|[A-Za-z0-9_.=-]+\*?)$/.test(namespace) ? undefined : 'is not a namespace (tenant/namespace, or tenant/*)'),
      ExecSetting.Namespaces,
      problems,
    ),
  };
  return { rules, problems };
}
