/**
 * A strategy's stream messages come from a plugin daemon running a third party's code: each is
 * read with the invoke-message schema, so a log is logged only when it has the fields a log
 * has, and a malformed one goes on to the observation path, which names the field.
 */
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { routeStrategyMessages } from '../../../../src/plugins/dify-agent/strategy-stream.js';
import { parseInvokeMessage } from '../../../../src/plugins/dify-common/invoke-message.js';
import type { StreamItem } from '../../../../src/plugins/dify-common/observe-stream.js';
import { captureLogger } from '../../../support/harness.js';

async function route(values: unknown[], logToAnswer = false): Promise<{ out: StreamItem[]; lines: string[] }> {
  const { log, lines } = captureLogger();
  const items = (async function* (): AsyncGenerator<StreamItem> {
    for (const value of values) yield { kind: 'message', value };
  })();
  const out: StreamItem[] = [];
  for await (const item of routeStrategyMessages(items, { log, span: trace.getTracer('test').startSpan('t'), logToAnswer })) out.push(item);
  return { out, lines: lines() };
}

const logMessage = {
  type: 'log',
  message: { id: 'l1', label: 'ROUND 1', parent_id: null, error: null, status: 'success', data: { output: 'ok' }, metadata: {} },
  meta: null,
};

describe("a strategy's stream messages", () => {
  it('logs a log message and puts it in the answer only when asked', async () => {
    const quiet = await route([logMessage]);
    expect(quiet.out).toEqual([]);
    expect(quiet.lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ msg: 'agent strategy log', logId: 'l1', label: 'ROUND 1', status: 'success', data: '{"output":"ok"}' }),
    ]);
    const told = await route([logMessage], true);
    expect(told.out).toEqual([{ kind: 'message', value: { type: 'text', message: { text: '[ROUND 1: success] {"output":"ok"}\n' }, meta: null } }]);
  });

  it('drops the execution metadata and passes any other message on as it came', async () => {
    const text = { type: 'text', message: { text: 'the answer' }, meta: null };
    const json = { type: 'json', message: { json_object: { answer: 42 } }, meta: null };
    const { out } = await route([{ type: 'json', message: { json_object: { execution_metadata: { total_tokens: 7 } } }, meta: null }, text, json]);
    expect(out).toEqual([
      { kind: 'message', value: text },
      { kind: 'message', value: json },
    ]);
  });

  it('passes a malformed log on, where it is refused naming the field, rather than logging guesses', async () => {
    const malformed = { type: 'log', message: { id: 'l2', status: 'start', data: {}, metadata: {} }, meta: null };
    const { out, lines } = await route([malformed]);
    expect(out).toEqual([{ kind: 'message', value: malformed }]);
    expect(lines).toEqual([]);
    expect(parseInvokeMessage(malformed)).toEqual({ ok: false, problem: expect.stringMatching(/^a log message is malformed at message\.label: /) });
  });
});
