/**
 * A Dify LLM invocation as a strategy sends it on the inner API, read once where it arrives.
 * Shapes: dify-plugin-daemon pkg/entities/model_entities/llm.go (bdb5642a), dify_plugin
 * entities/model/message.py (0.10.1). Only the fields toolwire reads are named; the strategy
 * runs in a plugin daemon, a third party's code, so a wrong shape is a clear error here, not a
 * `TypeError` in a translator.
 */
import { z } from 'zod';
import { firstIssue, ToolFailedError } from '../../errors.js';

const contentPart = z.object({
  type: z.string(),
  data: z.unknown().optional(),
  url: z.string().nullish(),
  mime_type: z.string().nullish(),
  base64_data: z.string().nullish(),
  detail: z.string().nullish(),
});
export type ContentPart = z.output<typeof contentPart>;

const promptToolCall = z.object({
  id: z.string().default(''),
  function: z.object({ name: z.string().default(''), arguments: z.string().nullish() }).default({ name: '' }),
});

const promptMessage = z.object({
  role: z.string().default('user'),
  content: z.union([z.string(), z.array(contentPart)]).nullish(),
  tool_calls: z.array(promptToolCall).nullish(),
  tool_call_id: z.string().nullish(),
});
export type PromptMessage = z.output<typeof promptMessage>;

const promptTool = z.object({
  name: z.string(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});

const params = z.record(z.string(), z.unknown()).nullish();

const llmInvocation = z.object({
  prompt_messages: z.array(promptMessage).nullish(),
  tools: z.array(promptTool).nullish(),
  stop: z.array(z.string()).nullish(),
  completion_params: params,
  // Older dify_plugin versions send the parameters under this name.
  model_parameters: params,
});
export type LlmInvocation = z.output<typeof llmInvocation>;

/** The invocation a strategy sent, or a ToolFailedError naming the first field that is wrong. */
export function readLlmInvocation(body: unknown): LlmInvocation {
  const read = llmInvocation.safeParse(body);
  if (read.success) return read.data;
  throw new ToolFailedError(`the strategy sent an LLM invocation toolwire cannot read ${firstIssue(read.error)}`);
}
