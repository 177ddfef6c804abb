import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { Resolver } from '../net/address-guard.js';
import type { Secrets } from '../secrets.js';
import type { PluginFaults } from './plugin-faults.js';

/** One invocation of a tool, as a plugin sees it. */
export interface ToolCall {
  readonly requestId: string;
  readonly service: ToolService;
  /** The matched tool descriptor; undefined when the service answers undeclared tools. */
  readonly tool: Tool | undefined;
  /** Values of the service's config-params. */
  readonly config: Readonly<Record<string, unknown>>;
  /** Prepared and coerced against the tool's declared parameters. */
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly user?: string;
  /** The agent reads the answer as a stream: chunks are worth sending as they come. */
  readonly stream: boolean;
  /** Aborted on timeout or shutdown; pass it to every blocking call. */
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/**
 * What a tool call gives back: observation text in chunks, or the whole text at once. The
 * second is for plugins that answer in one piece: an async generator there cost a busy
 * worker several promises per request for nothing.
 */
export type Observation = AsyncIterable<string> | Promise<string>;

export function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return v !== null && typeof v === 'object' && Symbol.asyncIterator in v;
}

/**
 * A running backend for one tool-service. `invoke` gives observation text; the worker joins
 * the chunks (single mode) or publishes each (stream mode). A failure the agent should read
 * is thrown (or rejected) as a ToolwireError; anything else is reported as an internal error.
 */
export interface Plugin {
  readonly kind: string;
  invoke(call: ToolCall): Observation;
  close?(): Promise<void>;
}

/** Counts of a plugin's own events, by a name the plugin's code chooses from a few (`retry`, `reconnect`, `token`). */
export interface PluginEvents {
  count(event: string): void;
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
}

export interface PluginFactory<S = unknown, T = unknown> {
  readonly kind: string;
  /** Validates the `plugin` object of a tool-service descriptor (minus `kind`). */
  readonly serviceOptions: z.ZodType<S>;
  /** Validates `plugin-options` of a tool descriptor; absent when tools carry none. */
  readonly toolOptions?: z.ZodType<T>;
  /** Load-time checks beyond the schemas (a module that must exist, a secret that must resolve). */
  check?(service: ToolService, tools: readonly Tool[], ctx: PluginContext): Promise<string[]>;
  /**
   * Opt-in (`toolwire validate --check-credentials`): ask the backend whether the service's
   * credentials are good, running the plugin's own validation. Problems, each naming the descriptor.
   */
  checkCredentials?(service: ToolService, tools: readonly Tool[], ctx: PluginContext, signal: AbortSignal): Promise<string[]>;
  create(service: ToolService, ctx: PluginContext): Promise<Plugin>;
}
