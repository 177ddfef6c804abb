import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Parameter } from '../arguments/parameter.js';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { Resolver } from '../net/address-guard.js';
import type { ExecPolicy, Execution, Reach } from '../policy/exec-policy.js';
import type { Secrets } from '../secrets.js';
import type { PluginFaults } from './plugin-faults.js';

/**
 * A tool-service served by a plugin kind, with its `plugin` options as that kind's
 * `serviceOptions` parsed them (the catalog build parses them with no other schema).
 */
export type ServiceWith<S> = ToolService & { readonly plugin: { readonly kind: string; readonly options: S } };

/** A tool of such a service, with its `plugin-options` as the kind's `toolOptions` parsed them. */
export type ToolWith<T> = Tool & { readonly pluginOptions: T };

/** True when a plugin kind serves the service (its descriptor names one). */
export function hasPlugin(service: ToolService): service is ServiceWith<unknown> {
  return service.plugin !== undefined;
}

/** One invocation of a tool, as a plugin sees it; `T`: its kind's tool options. */
export interface ToolCall<T = unknown> {
  readonly requestId: string;
  readonly service: ToolService;
  /** The matched tool descriptor; undefined when the service answers undeclared tools. */
  readonly tool: ToolWith<T> | undefined;
  /** Values of the service's config-params. */
  readonly config: Readonly<Record<string, unknown>>;
  /** Prepared and coerced against the tool's declared parameters. */
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly user?: string;
  /**
   * How many agent calls this call is nested in, as the request said (envelope/hops.ts);
   * undefined when it said nothing. An agent's own tool calls go out with one more, and a
   * plugin that calls HTTP sends it on (HOPS_HEADER), so a loop back to the fleet is counted.
   */
  readonly hops?: number;
  /** The agent reads the answer as a stream: chunks are worth sending as they come. */
  readonly stream: boolean;
  /**
   * The call's one deadline, in ms from when the plugin is invoked: the tool's `timeout-ms`,
   * else its service's, else the worker's (TOOLWIRE_TIMEOUT_MS). The worker aborts `signal`
   * when it passes; a backend that needs a timeout of its own (a request timeout, a child's
   * timer) takes this one, never a default of the plugin's.
   */
  readonly timeoutMs: number;
  /** Aborted on timeout or shutdown; pass it to every blocking call. */
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/**
 * What a tool call gives back: observation text in chunks, the whole text later, or the whole
 * text now. The second is for plugins that answer in one piece: an async generator there cost
 * a busy worker several promises per request for nothing. The third is for a tool that
 * computes its answer synchronously: the worker writes it at once, with no deadline timer or
 * abort race (neither could interrupt synchronous code), which cost a busy worker about a
 * dozen promises and a timer per request.
 */
export type Observation = string | PendingObservation;

/** An observation not there yet: the worker waits for it under the call's deadline. */
export type PendingObservation = AsyncIterable<string> | Promise<string>;

export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

/**
 * A running backend for one tool-service. `invoke` gives observation text; the worker joins
 * the chunks (single mode) or publishes each (stream mode). A failure the agent should read
 * is thrown (or rejected) as a ToolwireError; anything else is reported as an internal error.
 */
export interface Plugin<T = unknown> {
  readonly kind: string;
  invoke(call: ToolCall<T>): Observation;
  close?(): Promise<void>;
}

/** Counts of a plugin's own events, by a name the plugin's code chooses from a few (`retry`, `reconnect`, `token`). */
export interface PluginEvents {
  count(event: string): void;
  /** Model tokens a plugin spent (an agent strategy's model calls), by model and kind (`prompt`, `completion`). */
  tokens?(model: string, kind: string, count: number): void;
}

/**
 * The rest of the fleet, for a plugin whose work calls other tools (an agent strategy): the
 * live catalog's tools, and tool requests on the broker to whichever worker serves them.
 */
export interface Fleet {
  /** A tool descriptor of the live catalog, with its service. */
  tool(name: string): { readonly tool: Tool; readonly service: ToolService } | undefined;
  /** One tool request; the observation text in chunks. A tool's error answer is thrown as ToolResponseError (client/tool-client.ts). */
  call(
    target: { readonly tool: Tool; readonly service: ToolService },
    args: Record<string, unknown>,
    options: { readonly signal: AbortSignal; readonly user?: string; readonly timeoutMs?: number; readonly hops?: number },
  ): AsyncIterable<string>;
  /**
   * One request to a TrustGraph service that is not a tool (text-completion, say), correlated
   * by `id` as TrustGraph does: each answer message's body, until the caller stops reading (at
   * the service's own end-of-stream flag) or `signal` aborts (AbortedError).
   */
  exchange(topics: { readonly request: string; readonly response: string }, body: string, options: { readonly signal: AbortSignal }): AsyncIterable<Buffer>;
}

/** What a plugin factory gets from the worker: its own settings, never a request's. */
export interface PluginContext {
  readonly log: Logger;
  /** The descriptor directory, for module paths relative to it. */
  readonly configDir: string;
  readonly secrets: Secrets;
  /** Worker-level settings by plugin kind (daemon URL and key, binary paths...). */
  readonly settings: Readonly<Record<string, string | undefined>>;
  /** Where a plugin reports a fault of the worker's own making (readiness shows it). */
  readonly faults?: PluginFaults;
  /** Where a plugin counts what it does besides calls (retries, reconnects...): a metric per service. */
  readonly events?: PluginEvents;
  /** How host names become addresses for the request-forgery guard (default: the system's); tests map names without DNS. */
  readonly resolve?: Resolver;
  /**
   * The operator's bounds on what this worker's config source may make it do (the catalog
   * build and the worker set it); absent: the config directory's defaults, as before.
   */
  readonly policy?: ExecPolicy;
  /** The fleet's tools, for plugins that call them; absent where no broker is (validation). */
  readonly fleet?: Fleet;
  /**
   * Type check the TypeScript code a service would load, in the check, before loading it
   * (`validate --type-check`; a module under `run --watch` is checked regardless). Only asked
   * for: a whole program costs seconds.
   */
  readonly typeCheck?: boolean;
}

/**
 * A plugin kind. `S` and `T` are what its schemas parse a service's `plugin` object and a
 * tool's `plugin-options` into: every method is handed them typed, never to be cast.
 */
export interface PluginFactory<S = unknown, T = unknown> {
  readonly kind: string;
  /** Validates the `plugin` object of a tool-service descriptor (minus `kind`). */
  readonly serviceOptions: z.ZodType<S>;
  /** Validates `plugin-options` of a tool descriptor; absent when tools carry none (then `T` is unknown). */
  readonly toolOptions?: z.ZodType<T>;
  /**
   * What the service would make this machine execute (a command, a module file, a Dify plugin
   * run locally), found without executing anything. The catalog build puts it to the worker's
   * exec policy before any `check` or `create`: a factory whose check, create or calls run
   * something a descriptor names must list it here.
   */
  executes?(service: ServiceWith<S>, tools: readonly ToolWith<T>[], ctx: PluginContext): Promise<readonly Execution[]>;
  /** Where the service would make the worker connect, ruled on with `executes` (private addresses need the operator's leave). */
  reaches?(service: ServiceWith<S>): readonly Reach[];
  /**
   * Load-time checks beyond the schemas (a module that must exist, a secret that must resolve).
   * Runs only once the exec policy allowed what `executes` listed. `running`: the plugin
   * serving this very service descriptor now (only its tools changed), which a check may ask
   * instead of starting the backend again.
   */
  check?(service: ServiceWith<S>, tools: readonly ToolWith<T>[], ctx: PluginContext, running?: Plugin): Promise<string[]>;
  /**
   * Opt-in (`toolwire validate --check-credentials`): ask the backend whether the service's
   * credentials are good, running the plugin's own validation. Problems, each naming the descriptor.
   */
  checkCredentials?(service: ServiceWith<S>, tools: readonly ToolWith<T>[], ctx: PluginContext, signal: AbortSignal): Promise<string[]>;
  /**
   * The parameters of the tools whose descriptor says `"arguments": "from-module"`
   * (`argumentsFromModule`), by tool name, read from the code the service loads; asked once
   * its check passed. A kind without it takes no such tool.
   */
  toolParameters?(service: ServiceWith<S>, tools: readonly ToolWith<T>[], ctx: PluginContext): Promise<ReadonlyMap<string, readonly Parameter[]>>;
  create(service: ServiceWith<S>, ctx: PluginContext): Promise<Plugin<T>>;
}
