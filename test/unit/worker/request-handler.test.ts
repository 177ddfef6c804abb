/**
 * RequestHandler through its interceptor contract: an interceptor gets a readonly input and
 * reads what happened (tool, plugin times, error type, outcome) from what `next` resolves to;
 * the moment the final answer goes to the broker reaches an observer the interceptor hands
 * down, not a field it sets; and how loud an answered error is logged follows its severity.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_PROPERTY } from '../../../src/envelope/properties.js';
import { encodeRequest } from '../../../src/envelope/request.js';
import { decodeResponse } from '../../../src/envelope/response.js';
import { ErrorCode, ToolFailedError } from '../../../src/errors.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { IncomingMessage, Subscription } from '../../../src/transport/transport.js';
import type { CallInput, CallResult, Interceptor } from '../../../src/worker/interceptor.js';
import { DEFAULT_LIMITS } from '../../../src/worker/limits.js';
import { Outcome } from '../../../src/worker/outcome.js';
import { RequestHandler } from '../../../src/worker/request-handler.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { captureLogger, catalogOf, entry, pluginMaker, testRegistry, type Behaviour } from '../../support/harness.js';

const behaviours: Record<string, Behaviour> = {
  echo: (call) => `echo ${typeof call.arguments['text'] === 'string' ? call.arguments['text'] : ''}`,
  refuses: () => Promise.reject(new ToolFailedError('the tool says no')),
  breaks: () => Promise.reject(new Error('/srv/secret/path exploded')),
};

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A handler of service `h`, whose tools are named for the behaviour they run, behind `interceptors`; and the agent's side of its response topic. */
async function start(interceptors: readonly Interceptor[]) {
  // One behaviour for the service, which runs the behaviour named by the tool the call resolved to.
  const registry = testRegistry({ byTool: (call) => behaviours[call.tool!.name]!(call) });
  const tools = Object.keys(behaviours).map((name) => entry('tool', name, { name, service: 'h', op: name, arguments: [{ name: 'text', type: 'string' }] }));
  const catalog = await catalogOf(
    [entry('tool-service', 'h', service('h', { 'config-params': ['op'], plugin: { kind: 'test', behaviour: 'byTool' } })), ...tools],
    registry,
  );
  const h = catalog.services.get('h')!;
  const { log, lines } = captureLogger('info');
  const transport = new MemoryTransport();
  const answers: Subscription = await transport.subscribe({ topic: h.responseQueue, subscription: 'agent', type: 'Exclusive' });
  const handler = new RequestHandler({
    service: h,
    catalog: () => catalog,
    plugin: (await pluginMaker(registry, log)(h))!,
    transport,
    limits: DEFAULT_LIMITS,
    log,
    hardStop: new AbortController().signal,
    redeliverable: false,
    interceptors,
  });
  close = async () => {
    handler.dispose();
    await answers.close();
    await transport.close();
  };
  const next = answers[Symbol.asyncIterator]();
  return { handler, lines, answer: async () => decodeResponse((await next.next()).value!.data) };
}

/** A delivery of request `id` for `tool`; `events` hears its ack. */
function delivery(id: string, tool: string, events: string[] = []): IncomingMessage {
  return {
    data: encodeRequest({ config: {}, arguments: { text: 'hi' } }),
    properties: { id, [TOOL_PROPERTY]: tool },
    redeliveryCount: 0,
    messageId: id,
    deliveryKey: id,
    topic: 'persistent://tg/flow/h-request',
    ack: async () => void events.push('ack'),
    nack: async () => void events.push('nack'),
  };
}

/** An interceptor that keeps each input it is given and each result `next` resolves to. */
function recorder(): { interceptor: Interceptor; inputs: CallInput[]; results: CallResult[] } {
  const inputs: CallInput[] = [];
  const results: CallResult[] = [];
  const interceptor: Interceptor = async (input, next) => {
    inputs.push(input);
    const result = await next(input);
    results.push(result);
    return result;
  };
  return { interceptor, inputs, results };
}

describe('an interceptor of the request handler', () => {
  it('reads the tool, the plugin’s time and the outcome from what next resolves to', async () => {
    const seen = recorder();
    const { handler, answer } = await start([seen.interceptor]);
    expect((await handler.handle(delivery('r1', 'echo'), performance.now())).outcome).toBe(Outcome.Answered);
    expect((await answer()).response).toBe('echo hi');
    const [result] = seen.results;
    expect(result).toMatchObject({ outcome: Outcome.Answered, errorType: undefined });
    expect(result!.tool?.name).toBe('echo');
    expect(result!.pluginEndedAt).toBeGreaterThanOrEqual(result!.pluginStartedAt!);
  });

  it('reads the error type the agent was answered with, and the time of a plugin that failed', async () => {
    const seen = recorder();
    const { handler, answer } = await start([seen.interceptor]);
    expect((await handler.handle(delivery('r2', 'refuses'))).outcome).toBe(Outcome.Failed);
    expect((await answer()).error).toEqual({ type: ErrorCode.ToolFailed, message: 'the tool says no' });
    expect(seen.results[0]).toMatchObject({ outcome: Outcome.Failed, errorType: ErrorCode.ToolFailed });
    expect(seen.results[0]!.tool?.name).toBe('refuses');
    expect(seen.results[0]!.pluginEndedAt).toBeDefined();
  });

  it('hands the handler an input it never writes to: a frozen one is answered all the same', async () => {
    const seen = recorder();
    const freezing: Interceptor = (input, next) => next(Object.freeze({ ...input }));
    const { handler, answer } = await start([freezing, seen.interceptor]);
    expect((await handler.handle(delivery('r3', 'echo'))).outcome).toBe(Outcome.Answered);
    expect((await answer()).response).toBe('echo hi');
    expect(Object.isFrozen(seen.inputs[0])).toBe(true);
    expect(Object.keys(seen.inputs[0]!).sort()).toEqual(['message', 'receivedAt', 'service', 'startedAt']);
    expect(seen.results[0]!.tool?.name).toBe('echo');
  });

  it('hears, through the observer it passes next, that the final answer goes out: once, before the request is acked', async () => {
    const events: string[] = [];
    const outer: Interceptor = (input, next) => next({ ...input, answering: () => events.push('outer answering') });
    const inner: Interceptor = (input, next) =>
      next({
        ...input,
        answering: () => {
          events.push('inner answering');
          input.answering?.();
        },
      });
    const { handler } = await start([outer, inner]);
    await handler.handle(delivery('r4', 'echo', events));
    expect(events).toEqual(['inner answering', 'outer answering', 'ack']);
  });
});

describe('an error the handler answers', () => {
  it('is logged at info when it is the tool’s own, and at error, its text kept from the agent, when it is a fault', async () => {
    const { handler, lines, answer } = await start([]);
    await handler.handle(delivery('r5', 'refuses'));
    await handler.handle(delivery('r6', 'breaks'));
    expect((await answer()).error).toEqual({ type: ErrorCode.ToolFailed, message: 'the tool says no' });
    expect((await answer()).error).toEqual({ type: ErrorCode.ToolFailed, message: 'internal error in the tool worker' });
    const logged = lines().map((l) => JSON.parse(l) as { level: number; msg: string; requestId?: string });
    expect(logged.filter((l) => l.requestId === 'r5').map((l) => [l.level, l.msg])).toEqual([[30, 'request answered with an error']]);
    expect(logged.filter((l) => l.requestId === 'r6').map((l) => [l.level, l.msg])).toEqual([[50, 'tool failed unexpectedly']]);
  });
});
