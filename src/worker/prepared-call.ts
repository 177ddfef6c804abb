import type { Logger } from 'pino';
import type { Tool, ToolService } from '../catalog/descriptors.js';
import type { ToolCall } from '../plugins/plugin.js';
import type { CallAbort } from './call-abort.js';

/**
 * A request's logger, made on first use: a pino child costs on the hot path, and most answered
 * requests log nothing. The tool's name is filled in once the request is resolved.
 */
export class CallLog {
  tool: string | undefined;
  #made: Logger | undefined;

  constructor(
    private readonly base: Logger,
    private readonly requestId: string,
  ) {}

  get(): Logger {
    return (this.#made ??= this.base.child({ requestId: this.requestId, tool: this.tool }));
  }
}

/**
 * One call as its plugin sees it. A class, with the abort signal and the logger as getters on
 * its prototype: they are made only for a plugin that reads them, and an object literal with
 * getters cost two closures and a slow-mode object per request (about 1 µs; docs/benchmarks-rationale.md).
 */
export class PreparedCall implements ToolCall {
  readonly arguments: Readonly<Record<string, unknown>>;
  declare readonly user?: string;
  readonly #abort: CallAbort;
  readonly #log: CallLog;

  constructor(
    readonly requestId: string,
    readonly service: ToolService,
    readonly tool: Tool | undefined,
    readonly config: Readonly<Record<string, unknown>>,
    args: Readonly<Record<string, unknown>>,
    user: string | undefined,
    readonly stream: boolean,
    readonly timeoutMs: number,
    abort: CallAbort,
    log: CallLog,
  ) {
    this.arguments = args;
    if (user !== undefined) (this as { user?: string }).user = user;
    this.#abort = abort;
    this.#log = log;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get log(): Logger {
    return this.#log.get();
  }
}
