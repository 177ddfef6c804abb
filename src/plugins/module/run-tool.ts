import pino from 'pino';
import { observationText } from '../../envelope/response.js';
import { isAsyncIterable } from '../plugin.js';
import type { ModuleToolContext } from './tool-context.js';
import { prepareArguments } from '../../arguments/prepare-arguments.js';
import { parseArguments, typedToolParameters, type ArgumentsSchema, type TypedTool } from './typed-tool.js';

export interface RunToolOptions {
  readonly config?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
  /** The call's `requestId` (default `test`): a tool that dedupes on it is tested with the same id twice. */
  readonly requestId?: string;
}

/**
 * A typed tool called as the worker calls it, for a tool's own tests: the arguments prepared
 * as for the descriptors `toolwire module import` writes (a required one missing, the
 * coercions of docs/descriptors.md), then checked against its schema (an
 * InvalidArgumentsError when either fails, in the words the agent reads), then `run`, its
 * answer as the observation text the agent gets.
 */
export async function runTool<S extends ArgumentsSchema>(
  tool: TypedTool<S>,
  args: Readonly<Record<string, unknown>>,
  options: RunToolOptions = {},
): Promise<string> {
  const parsed = parseArguments(tool, prepareArguments(typedToolParameters(tool), {}, args));
  const ctx: ModuleToolContext = {
    tool: tool.name,
    service: 'test',
    requestId: options.requestId ?? 'test',
    config: options.config ?? {},
    arguments: parsed,
    signal: options.signal ?? new AbortController().signal,
    log: pino({ level: 'silent' }),
  };
  const out = await tool.run(parsed, ctx);
  if (!isAsyncIterable(out)) return observationText(out);
  let text = '';
  for await (const chunk of out) text += observationText(chunk);
  return text;
}
