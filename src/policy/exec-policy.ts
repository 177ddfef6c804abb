import { realpathSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute, relative } from 'node:path';
import ipaddr from 'ipaddr.js';
import { AddressGuard } from '../net/address-guard.js';
import { ExecSetting, type Allowance, type ExecRules } from './exec-rules.js';
import { ORIGIN_TEXT, type ConfigOrigin } from './config-origin.js';
import { nameMatcher } from './name-patterns.js';

export type { ConfigOrigin } from './config-origin.js';

/**
 * Something a service would make this machine execute, found without executing it. Each
 * names where in the descriptors it comes from (`tool-service/x.json: plugin.command`).
 */
export type Execution =
  /** A child process an MCP stdio service starts. `path`: the absolute file, when the command names one by path. */
  | { readonly type: 'command'; readonly where: string; readonly command: string; readonly path: string | undefined }
  /** A file a module plugin imports (its top-level code runs). `file`: where it resolves, undefined when it does not. */
  | { readonly type: 'module'; readonly where: string; readonly specifier: string; readonly file: string | undefined }
  /** A Dify plugin the slim binary fetches and runs on this machine (local mode). */
  | { readonly type: 'slim-plugin'; readonly where: string; readonly id: string }
  /** Environment variables a descriptor sets for a command: NODE_OPTIONS, LD_PRELOAD and their kind run code in it. */
  | { readonly type: 'command-env'; readonly where: string; readonly command: string; readonly names: readonly string[] }
  /**
   * The working directory a descriptor gives a command (absolute): interpreters look for code
   * there (python -m, npx's node_modules/.bin, an .npmrc), so it is ruled on as a module root.
   */
  | { readonly type: 'working-dir'; readonly where: string; readonly dir: string };

/**
 * Where a service makes the worker connect, found without connecting: its URL, and the
 * addresses beyond the public internet its descriptor asks for (OpenAPI's `allow-private`).
 */
export interface Reach {
  readonly where: string;
  readonly url: string;
  /** false: none asked for; true: all of them; else these CIDRs. */
  readonly allowPrivate: boolean | readonly string[];
}

const NOTHING: Allowance = { any: false, items: [] };
const ANYTHING: Allowance = { any: true };

/**
 * The defaults by origin. A directory is the operator's own: what it names may run, as it
 * always could. A config service is written through a gateway and the broker by others:
 * nothing of theirs executes on the worker unless the operator lists it.
 */
const DEFAULTS: Record<ConfigOrigin, Required<Omit<ExecRules, 'namespaces'>>> = {
  directory: { plugins: ANYTHING, commands: ANYTHING, moduleRoots: ANYTHING, slimPlugins: ANYTHING, commandEnv: ANYTHING, privateNetworks: ANYTHING },
  trustgraph: { plugins: ANYTHING, commands: NOTHING, moduleRoots: NOTHING, slimPlugins: NOTHING, commandEnv: NOTHING, privateNetworks: NOTHING },
};

/** What a service does on a topic: take requests from it, or answer on it. */
export type TopicRole = 'request' | 'response';

/**
 * The namespaces a service's topics may lie in when TOOLWIRE_ALLOW_NAMESPACES is unset. A
 * config service's descriptors stay in TrustGraph's own (tenant `tg`, as its bootstrap makes
 * them): requests where its services take them, answers where its clients read them; `flow`
 * for persistent queues. Elsewhere the worker's broker credentials may reach other services.
 */
const NAMESPACE_DEFAULTS: Record<ConfigOrigin, Record<TopicRole, Allowance>> = {
  directory: { request: ANYTHING, response: ANYTHING },
  trustgraph: { request: { any: false, items: ['tg/request', 'tg/flow'] }, response: { any: false, items: ['tg/response', 'tg/flow'] } },
};

/** The default namespaces of a source, by role, in words. */
function defaultNamespacesText(origin: ConfigOrigin): string {
  const { request, response } = NAMESPACE_DEFAULTS[origin];
  const words = (a: Allowance) => (a.any ? 'any namespace' : a.items.join(' and '));
  return `requests in ${words(request)} and answers in ${words(response)}`;
}

/** The default namespaces of a source as one list, and `namespace`. */
function defaultNamespacesWith(origin: ConfigOrigin, namespace: string): string {
  const { request, response } = NAMESPACE_DEFAULTS[origin];
  const items = [request, response].flatMap((a) => (a.any ? [] : a.items));
  return [...new Set([...items, namespace])].join(',');
}

function isWithin(root: string, file: string): boolean {
  const rel = relative(root, file);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Whether every address of CIDR `inner` lies in CIDR `outer`. */
function cidrWithin(inner: string, outer: string): boolean {
  const [a, aBits] = ipaddr.parseCIDR(inner);
  const [b, bBits] = ipaddr.parseCIDR(outer);
  return a.kind() === b.kind() && bBits <= aBits && a.match(b, bBits);
}

function realOrSame(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Decides what descriptors from one config origin may make this worker execute: plugin
 * kinds, MCP stdio commands, module files, Dify plugins run locally by slim. The build of
 * every catalog asks it before any plugin's check or create runs; a refusal is a problem of
 * the change, which is then refused whole.
 */
export class ExecPolicy {
  private readonly rules: Required<Omit<ExecRules, 'namespaces'>>;
  private readonly slimMatch: (id: string) => boolean;
  private readonly envMatch: (name: string) => boolean;

  constructor(
    readonly origin: ConfigOrigin,
    /** What the operator set; unset entries take the origin's default. */
    private readonly given: ExecRules = {},
  ) {
    const d = DEFAULTS[origin];
    this.rules = {
      plugins: given.plugins ?? d.plugins,
      commands: given.commands ?? d.commands,
      moduleRoots: given.moduleRoots ?? d.moduleRoots,
      slimPlugins: given.slimPlugins ?? d.slimPlugins,
      commandEnv: given.commandEnv ?? d.commandEnv,
      privateNetworks: given.privateNetworks ?? d.privateNetworks,
    };
    const slim = this.rules.slimPlugins;
    this.slimMatch = slim.any ? () => true : nameMatcher(slim.items);
    const env = this.rules.commandEnv;
    this.envMatch = env.any ? () => true : nameMatcher(env.items);
  }

  /**
   * The addresses beyond the public internet descriptors may make the worker connect to: all
   * (true), or those of these CIDRs. A plugin whose descriptor cannot narrow it (an MCP URL)
   * guards its connections with it.
   */
  privateAllowance(): true | readonly string[] {
    const allowance = this.rules.privateNetworks;
    return allowance.any ? true : allowance.items;
  }

  /** Why the service may not connect where `r` says, or undefined when it may. */
  refuseReach(reach: Reach): string | undefined {
    const allowed = this.privateAllowance();
    if (allowed === true) return undefined;
    const origin = ORIGIN_TEXT[this.origin];
    const how = this.how(ExecSetting.PrivateNetworks, this.given.privateNetworks, 'their CIDRs');
    const asked =
      reach.allowPrivate === true
        ? ['every private address']
        : reach.allowPrivate === false
          ? []
          : reach.allowPrivate.filter((cidr) => !allowed.some((range) => cidrWithin(cidr, range)));
    if (asked.length > 0 || reach.allowPrivate === true) {
      return `${reach.where}: the worker does not connect to ${asked.join(', ')} (loopback, private, link-local...) for ${origin}: ${how}`;
    }
    // A literal address is judged now; a name is judged by the plugin's guard at each connection.
    const host = URL.canParse(reach.url) ? new URL(reach.url).hostname.replace(/^\[|\]$/g, '') : '';
    if (!isIP(host)) return undefined;
    const kind = new AddressGuard({ allowPrivate: [...allowed] }).refusedKind(host);
    return kind && `${reach.where}: the worker does not connect to ${host}, ${kind}, for ${origin}: ${how}`;
  }

  /**
   * Why a service may not take requests from (`request`) or answer on (`response`) `topic`,
   * which lies in `namespace` (`tenant/namespace`); undefined when it may.
   */
  refuseTopic(where: string, role: TopicRole, topic: string, namespace: string): string | undefined {
    const given = this.given.namespaces;
    const allowance = given ?? NAMESPACE_DEFAULTS[this.origin][role];
    if (allowance.any || nameMatcher(allowance.items)(namespace)) return undefined;
    const done = role === 'request' ? `take requests from ${topic}` : `answer on ${topic}`;
    // Setting it replaces the default for both roles: say what it must then hold.
    const how =
      given === undefined
        ? `${ExecSetting.Namespaces} is unset, which allows ${defaultNamespacesText(this.origin)} for this source; set it to the namespaces services may use (${defaultNamespacesWith(this.origin, namespace)}) to allow it`
        : `add ${namespace} to ${ExecSetting.Namespaces} to allow it`;
    return `${where}: the worker does not ${done} for ${ORIGIN_TEXT[this.origin]}: ${how}`;
  }

  /**
   * Why a service may not consume its request topic as `subscription`, its id's own being
   * `own`; undefined when it may. From a config service only its own: a Shared subscription
   * of another name may be another service's, whose requests the worker would then take.
   */
  refuseSubscription(where: string, subscription: string, own: string): string | undefined {
    if (this.origin === 'directory' || subscription === own) return undefined;
    return `${where}: the worker consumes as ${JSON.stringify(own)} for ${ORIGIN_TEXT[this.origin]}, as TrustGraph's own tool services do, not as ${JSON.stringify(subscription)}, which may be another service's: leave subscription out`;
  }

  /** Why descriptors may not use plugin `kind` here, or undefined when they may. */
  refusePlugin(kind: string): string | undefined {
    const allowance = this.rules.plugins;
    if (allowance.any || allowance.items.includes(kind)) return undefined;
    return `plugin kind "${kind}" is not allowed on this worker for ${ORIGIN_TEXT[this.origin]}: ${this.how(ExecSetting.Plugins, this.given.plugins)}`;
  }

  /** The problem text when `e` may not run, or undefined when it may. */
  refuse(execution: Execution): string | undefined {
    const origin = ORIGIN_TEXT[this.origin];
    switch (execution.type) {
      case 'command': {
        const allowance = this.rules.commands;
        if (allowance.any || allowance.items.includes(execution.path ?? execution.command)) return undefined;
        const shown =
          execution.path && execution.path !== execution.command
            ? `${JSON.stringify(execution.command)} (${execution.path})`
            : JSON.stringify(execution.command);
        return `${execution.where}: the worker does not start ${shown} for ${origin}: ${this.how(ExecSetting.Commands, this.given.commands)}`;
      }
      case 'module': {
        const allowance = this.rules.moduleRoots;
        if (allowance.any) return undefined;
        if (execution.file === undefined) {
          return `${execution.where}: ${JSON.stringify(execution.specifier)} is not found, and for ${origin} the worker imports only builtin: modules and files under ${ExecSetting.ModuleRoots}`;
        }
        const file = execution.file;
        if (allowance.items.some((root) => isWithin(root, file) || isWithin(realOrSame(root), file))) return undefined;
        return `${execution.where}: the worker does not import ${JSON.stringify(execution.specifier)} (${file}) for ${origin}: it is under no directory of ${ExecSetting.ModuleRoots}; ${this.how(ExecSetting.ModuleRoots, this.given.moduleRoots, 'a directory that holds it', 'only builtin: modules')}`;
      }
      case 'slim-plugin':
        if (this.slimMatch(execution.id)) return undefined;
        return `${execution.where}: the worker does not run Dify plugin ${JSON.stringify(execution.id)} on this machine (DIFY_SLIM_MODE=local) for ${origin}: ${this.how(ExecSetting.SlimPlugins, this.given.slimPlugins)}`;
      case 'command-env': {
        const refused = execution.names.filter((name) => !this.envMatch(name));
        if (refused.length === 0) return undefined;
        return `${execution.where}: the worker does not set ${refused.join(', ')} for ${JSON.stringify(execution.command)} for ${origin} (such variables can make a command run other code): ${this.how(ExecSetting.CommandEnv, this.given.commandEnv, refused.length > 1 ? 'them' : 'it')}`;
      }
      case 'working-dir': {
        const allowance = this.rules.moduleRoots;
        // Judged by where it really is, as a module file: a link under a root may point anywhere.
        const dir = realOrSame(execution.dir);
        if (allowance.any || allowance.items.some((root) => isWithin(root, dir) || isWithin(realOrSame(root), dir))) return undefined;
        return `${execution.where}: the worker does not start a command in ${JSON.stringify(execution.dir)} for ${origin}: interpreters load code from their working directory, so it must be under a directory of ${ExecSetting.ModuleRoots}; ${this.how(ExecSetting.ModuleRoots, this.given.moduleRoots, 'a directory that holds it')}`;
      }
    }
  }

  /** How the operator would allow it: the setting to change, and what its unset default means. */
  private how(setting: ExecSetting, given: Allowance | undefined, what = 'it', fallback = 'none'): string {
    return given === undefined
      ? `${setting} is unset, which allows ${fallback} for this source; add ${what} to ${setting} to allow it`
      : `add ${what} to ${setting} to allow it`;
  }
}
