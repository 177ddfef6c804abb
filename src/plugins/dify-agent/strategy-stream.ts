import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { StreamItem } from '../dify-common/observe-stream.js';
import { stringifyPluginJson } from '../dify-common/plugin-json.js';
import { jsonText } from '../../plain-object.js';

type Json = Record<string, unknown>;

export interface StrategyStreamOptions {
  readonly log: Logger;
  readonly span: Span;
  /** Put each log message into the answer as a line of text too (stream mode, when the descriptor asks). */
  readonly logToAnswer: boolean;
}

function logLine(message: Json): string {
  const data = message['data'] && typeof message['data'] === 'object' ? stringifyPluginJson(message['data']) : '';
  return `[${jsonText(message['label'])}: ${jsonText(message['status'])}] ${data}\n`;
}

/**
 * A strategy's AgentInvokeMessages, before they become observation text: LOG messages (the
 * thought, action and observation trace) go to the log and the call's span, and into the
 * answer only when asked; the `execution_metadata` JSON that langgenius/agent sends last is
 * bookkeeping, not an answer. The rest goes on to the Dify observation path unchanged.
 */
export async function* routeStrategyMessages(items: AsyncIterable<StreamItem>, opts: StrategyStreamOptions): AsyncGenerator<StreamItem> {
  for await (const item of items) {
    if (item.kind !== 'message' || !item.value || typeof item.value !== 'object') {
      yield item;
      continue;
    }
    const msg = item.value as Json;
    const body = (msg['message'] ?? {}) as Json;
    if (msg['type'] === 'log') {
      // The daemon's JSON is read with exact numbers: written back as JSON text, not as objects.
      opts.log.info(
        {
          logId: body['id'],
          parent: body['parent_id'],
          label: body['label'],
          status: body['status'],
          data: stringifyPluginJson(body['data'] ?? null),
          error: body['error'] ?? undefined,
        },
        'agent strategy log',
      );
      opts.span.addEvent('agent.log', {
        'agent.log.label': jsonText(body['label']),
        'agent.log.status': jsonText(body['status']),
        'agent.log.id': jsonText(body['id']),
      });
      if (opts.logToAnswer) yield { kind: 'message', value: { type: 'text', message: { text: logLine(body) }, meta: null } };
      continue;
    }
    if (msg['type'] === 'json' && body['json_object'] && typeof body['json_object'] === 'object' && 'execution_metadata' in (body['json_object'] as Json)) {
      opts.log.debug({ metadata: (body['json_object'] as Json)['execution_metadata'] }, 'agent strategy execution metadata');
      continue;
    }
    yield item;
  }
}
