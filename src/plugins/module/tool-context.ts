import type { Logger } from 'pino';

/** What an in-process tool receives. */
export interface ModuleToolContext {
  /** The tool's name when a descriptor matched. */
  readonly tool: string | undefined;
  readonly service: string;
  readonly requestId: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly user?: string;
  /** Aborted on timeout or shutdown: pass it to whatever may block. */
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/**
 * A value (a string, or anything JSON: sent as its JSON text), a promise of one, or chunks of
 * an answer (an AsyncIterable). `unknown`, which all of those are.
 */
export type ModuleToolResult = unknown;
