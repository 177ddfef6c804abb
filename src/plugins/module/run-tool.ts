import pino from 'pino';
import { observationText } from '../../envelope/response.js';
import { isAsyncIterable } from '../plugin.js';
import type { ModuleToolContext } from './tool-context.js';
import { parseArguments, type ArgumentsSchema, type TypedTool } from './typed-tool.js';

export interface RunToolOptions {
  readonly config?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
}

/**
 * A typed tool called as the worker calls it, for a tool's own tests: the arguments
 * checked against its schema (an InvalidArgumentsError when they fail it, as the agent
 * would read it), then `run`, its answer as the observation text the agent gets.
 */
export async function runTool<S extends ArgumentsSchema>(
  tool: TypedTool<S>,
  args: Readonly<Record<string, unknown>>,
  options: RunToolOptions = {},
): Promise<string> {
  const parsed = parseArguments(tool, args);
  const ctx: ModuleToolContext = {
    tool: tool.name,
    service: 'test',
    requestId: 'test',
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
