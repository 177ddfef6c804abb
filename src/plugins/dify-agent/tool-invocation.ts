/**
 * A tool call as a strategy sends it on the inner API (`InvokeToolRequest`, dify-plugin-daemon
 * dify_invocation/types.go at bdb5642a), read once where it arrives. The strategy is a third
 * party's code: a wrong shape is a clear error naming the field, never arguments guessed from it.
 */
import { z } from 'zod';
import { firstIssue, ToolFailedError } from '../../errors.js';

const toolInvocation = z.object({
  provider: z.string(),
  tool: z.string(),
  tool_parameters: z
    .record(z.string(), z.unknown())
    .nullish()
    .transform((value) => value ?? {}),
});
export type ToolInvocation = z.output<typeof toolInvocation>;

/** The tool call a strategy sent, or a ToolFailedError naming the first field that is wrong. */
export function readToolInvocation(body: unknown): ToolInvocation {
  const read = toolInvocation.safeParse(body);
  if (read.success) return read.data;
  throw new ToolFailedError(`the strategy sent a tool call toolwire cannot read ${firstIssue(read.error)}`);
}
