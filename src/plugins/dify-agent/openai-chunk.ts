/** OpenAI's chat completions streaming format (`chat.completion.chunk`), as compatible endpoints send it. */
import { z } from 'zod';

/** One event of an OpenAI chat completions stream: the parts the translator reads. */
export const chatCompletionChunk = z.object({
  error: z.unknown().optional(),
  usage: z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish(),
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().nonnegative().optional(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
});
export type ChatCompletionChunk = z.output<typeof chatCompletionChunk>;
