import type { Logger } from 'pino';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { ToolCall } from '../plugins/plugin.js';
import { CallAbort } from './call-abort.js';

/** The logger of one request: its id, and its tool once resolved. */
export function requestLog(base: Logger, requestId: string, tool: Tool | undefined): Logger {
  return base.child({ requestId, tool: tool?.name });
}

/** What a call is made of: the plugin's view of it, less what the call makes itself. */
export type CallParts = Omit<ToolCall, 'signal' | 'log'>;

/**
 * One call as its plugin sees it. A class, with the abort signal and the logger as getters on
 * its prototype, each made on first use: most in-process tools read neither, and an object
 * literal with getters cost two closures and a slow-mode object per request, about 1 µs
 * (docs/benchmarks-rationale.md). The logger is a child with the request id and the tool, made
 * once: a pino child costs on the hot path, and most answered requests log nothing.
 */
export class PreparedCall implements ToolCall {
  readonly requestId: string;
  readonly service: ToolService;
  readonly tool: Tool | undefined;
  readonly config: Readonly<Record<string, unknown>>;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly stream: boolean;
  readonly timeoutMs: number;
  // Own properties only when the request has them: a plugin that copies the call sees none.
  declare readonly user?: string;
  declare readonly hops?: number;
  readonly #base: Logger;
  #log: Logger | undefined;
  #abort: CallAbort | undefined;

  /** `log`: the service's; the call's own is a child of it, made when first read. */
  constructor(parts: CallParts, log: Logger) {
    this.requestId = parts.requestId;
    this.service = parts.service;
    this.tool = parts.tool;
    this.config = parts.config;
    this.arguments = parts.arguments;
    this.stream = parts.stream;
    this.timeoutMs = parts.timeoutMs;
    if (parts.user !== undefined) this.user = parts.user;
    if (parts.hops !== undefined) this.hops = parts.hops;
    this.#base = log;
  }

  /**
   * The abort side of `call`, made when first asked for: by the handler for a plugin whose
   * answer it waits for, or by a plugin that reads its signal. A static, not a getter: the
   * plugin sees the signal, not what aborts it.
   */
  static abortOf(call: PreparedCall): CallAbort {
    return (call.#abort ??= new CallAbort());
  }

  get signal(): AbortSignal {
    return PreparedCall.abortOf(this).signal;
  }

  get log(): Logger {
    return (this.#log ??= requestLog(this.#base, this.requestId, this.tool));
  }
}
