import type { Logger } from 'pino';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { ToolCall } from '../plugins/plugin.js';
import { CallAbort } from './call-abort.js';

/** The logger of one request: its id, and its tool once resolved. */
export function requestLog(base: Logger, requestId: string, tool: Tool | undefined): Logger {
  return base.child({ requestId, tool: tool?.name });
}

/**
 * One call as its plugin sees it. A class, with the abort signal and the logger as getters on
 * its prototype, each made on first use: most in-process tools read neither, and an object
 * literal with getters cost two closures and a slow-mode object per request, about 1 µs
 * (docs/benchmarks-rationale.md). The logger is a child with the request id and the tool, made
 * once: a pino child costs on the hot path, and most answered requests log nothing.
 */
export class PreparedCall implements ToolCall {
  readonly arguments: Readonly<Record<string, unknown>>;
  declare readonly user?: string;
  declare readonly hops?: number;
  readonly #base: Logger;
  #log: Logger | undefined;
  #abort: CallAbort | undefined;

  constructor(
    readonly requestId: string,
    readonly service: ToolService,
    readonly tool: Tool | undefined,
    readonly config: Readonly<Record<string, unknown>>,
    args: Readonly<Record<string, unknown>>,
    user: string | undefined,
    readonly stream: boolean,
    readonly timeoutMs: number,
    log: Logger,
    hops?: number,
  ) {
    this.arguments = args;
    if (user !== undefined) (this as { user?: string }).user = user;
    if (hops !== undefined) (this as { hops?: number }).hops = hops;
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
