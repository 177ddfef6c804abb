import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { StreamItem } from '../dify-common/observe-stream.js';
import { stringifyPluginJson } from '../dify-common/plugin-json.js';
import { isPlainObject } from '../../plain-object.js';
import { InvokeMessageType, isKnown, parseInvokeMessage, type LogMessage } from '../dify-common/invoke-message.js';

export interface StrategyStreamOptions {
  readonly log: Logger;
  readonly span: Span;
  /** Put each log message into the answer as a line of text too (stream mode, when the descriptor asks). */
  readonly logToAnswer: boolean;
}

function logLine(message: LogMessage['message']): string {
  const data = message.data && typeof message.data === 'object' ? stringifyPluginJson(message.data) : '';
  return `[${message.label}: ${message.status}] ${data}\n`;
}

/**
 * A strategy's AgentInvokeMessages, before they become observation text: LOG messages (the
 * thought, action and observation trace) go to the log and the call's span, and into the
 * answer only when asked; the `execution_metadata` JSON that langgenius/agent sends last is
 * bookkeeping, not an answer. The rest goes on to the Dify observation path unchanged, where a
 * message of the wrong shape (a malformed log too) ends the call with the field it names.
 */
export async function* routeStrategyMessages(items: AsyncIterable<StreamItem>, opts: StrategyStreamOptions): AsyncGenerator<StreamItem> {
  for await (const item of items) {
    const parsed = item.kind === 'message' ? parseInvokeMessage(item.value) : undefined;
    const msg = parsed?.ok && isKnown(parsed.message) ? parsed.message : undefined;
    if (msg?.type === InvokeMessageType.Log) {
      const body = msg.message;
      // The daemon's JSON is read with exact numbers: written back as JSON text, not as objects.
      opts.log.info(
        {
          logId: body.id,
          parent: body.parent_id,
          label: body.label,
          status: body.status,
          data: stringifyPluginJson(body.data ?? null),
          error: body.error ?? undefined,
        },
        'agent strategy log',
      );
      opts.span.addEvent('agent.log', { 'agent.log.label': body.label, 'agent.log.status': body.status, 'agent.log.id': body.id });
      if (opts.logToAnswer) yield { kind: 'message', value: { type: 'text', message: { text: logLine(body) }, meta: null } };
      continue;
    }
    const object = msg?.type === InvokeMessageType.Json ? msg.message.json_object : undefined;
    if (isPlainObject(object) && 'execution_metadata' in object) {
      opts.log.debug({ metadata: object['execution_metadata'] }, 'agent strategy execution metadata');
      continue;
    }
    yield item;
  }
}
