import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import { decodeRequest } from '../envelope/request.js';
import { encodeError, observationText, wireError } from '../envelope/response.js';
import { AbortedError, TimeoutError, isRetriable } from '../errors.js';
import type { Plugin } from '../plugins/plugin.js';
import { prepareArguments } from '../tools/prepare-arguments.js';
import { defaultDeadLetterTopic, type IncomingMessage, type Producer, type Transport } from '../transport/transport.js';
import { DEAD_LETTER_REASON_PROPERTY, STREAM_PROPERTY, TOOL_PROPERTY, type WorkerLimits } from './limits.js';
import { createSink } from './observation-sink.js';

/** How one delivery ended. */
export const Outcome = {
  Answered: 'answered',
  Failed: 'failed',
  Nacked: 'nacked',
  DeadLettered: 'dead-lettered',
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

export interface RequestHandlerDeps {
  readonly service: ToolService;
  readonly catalog: () => Catalog;
  readonly plugin: Plugin;
  readonly transport: Transport;
  readonly limits: WorkerLimits;
  readonly log: Logger;
  /** Aborted when the shutdown grace period is over. */
  readonly hardStop: AbortSignal;
}

/**
 * decode -> resolve -> prepare -> invoke -> publish -> ack, for one service. Every path
 * settles the message exactly once: answered then acked, nacked for redelivery, or
 * dead-lettered when nobody can be answered.
 */
export class RequestHandler {
  private responses: Promise<Producer> | undefined;

  constructor(private readonly deps: RequestHandlerDeps) {}

  private producer(): Promise<Producer> {
    this.responses ??= this.deps.transport.producer(this.deps.service.responseQueue).catch((err: unknown) => {
      this.responses = undefined;
      throw err;
    });
    return this.responses;
  }

  async handle(msg: IncomingMessage): Promise<Outcome> {
    const { service, log: baseLog } = this.deps;
    const id = msg.properties['id'];
    if (!id) return this.deadLetter(msg, 'request has no id property; no agent could receive an answer');
    const log = baseLog.child({ requestId: id });
    try {
      return await this.answer(msg, id, log);
    } catch (err) {
      // Publishing failed (broker gone): the request comes back and is answered then.
      log.warn({ err, service: service.id }, 'could not publish the answer; request nacked');
      await msg.nack();
      return Outcome.Nacked;
    }
  }

  private async answer(msg: IncomingMessage, id: string, log: Logger): Promise<Outcome> {
    const { service, limits, hardStop } = this.deps;
    const properties = { id };
    let toolName: string | undefined;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const onHardStop = () => controller.abort(new AbortedError('the worker is shutting down'));
    try {
      const request = decodeRequest(msg.data, limits.maxPayloadBytes);
      const { tool, config } = this.deps.catalog().resolve(service, request.config, msg.properties[TOOL_PROPERTY]);
      toolName = tool?.name;
      const args = prepareArguments(tool?.parameters ?? [], tool?.runtimeParameters ?? {}, request.arguments);
      const timeoutMs = tool?.timeoutMs ?? service.timeoutMs ?? limits.timeoutMs;
      if (hardStop.aborted) onHardStop();
      else hardStop.addEventListener('abort', onHardStop, { once: true });
      timer = setTimeout(() => controller.abort(new TimeoutError(`tool ${toolName ?? service.id} did not finish within ${timeoutMs} ms`)), timeoutMs);

      const streamProp = msg.properties[STREAM_PROPERTY];
      const stream = streamProp === undefined ? service.stream === 'stream' : streamProp === 'true' || streamProp === '1';
      const sink = createSink(stream, await this.producer(), properties, limits.maxObservationBytes);
      const callLog = log.child({ tool: toolName });
      callLog.debug({ stream, redelivery: msg.redeliveryCount }, 'invoking tool');
      const chunks = this.deps.plugin.invoke({
        requestId: id,
        service,
        tool,
        config,
        arguments: args,
        ...(request.user !== undefined ? { user: request.user } : {}),
        signal: controller.signal,
        log: callLog,
      });
      const aborted = abortPromise(controller.signal);
      const it = chunks[Symbol.asyncIterator]();
      try {
        for (;;) {
          // A plugin that ignores its signal still cannot hold the request past its timeout.
          const r = await Promise.race([it.next(), aborted]);
          if (r.done) break;
          await sink.write(observationText(r.value));
        }
      } catch (err) {
        void it.return?.()?.catch(() => undefined);
        throw controller.signal.aborted ? controller.signal.reason : err;
      }
      await sink.end();
      await msg.ack();
      callLog.info({ outcome: Outcome.Answered }, 'request answered');
      return Outcome.Answered;
    } catch (err) {
      return this.fail(msg, err, properties, log.child({ tool: toolName }));
    } finally {
      clearTimeout(timer);
      hardStop.removeEventListener('abort', onHardStop);
    }
  }

  private async fail(msg: IncomingMessage, err: unknown, properties: Record<string, string>, log: Logger): Promise<Outcome> {
    const { limits, service } = this.deps;
    if (err instanceof AbortedError) {
      log.warn({ service: service.id }, 'interrupted by shutdown; request nacked for another worker');
      await msg.nack();
      return Outcome.Nacked;
    }
    if (isRetriable(err) && msg.redeliveryCount < limits.maxRedeliveries) {
      log.warn({ err, service: service.id, redelivery: msg.redeliveryCount }, 'transient failure; request nacked for redelivery');
      await msg.nack();
      return Outcome.Nacked;
    }
    const e = wireError(err);
    if (e.message === 'internal error in the tool worker') log.error({ err, service: service.id }, 'tool failed unexpectedly');
    else log.info({ service: service.id, errorType: e.type, errorMessage: e.message }, 'request answered with an error');
    await (await this.producer()).send({ data: encodeError(e.type, e.message), properties });
    await msg.ack();
    return Outcome.Failed;
  }

  private async deadLetter(msg: IncomingMessage, reason: string): Promise<Outcome> {
    const { service, transport, log } = this.deps;
    const topic = defaultDeadLetterTopic(service.requestQueue, service.subscription);
    try {
      const dlq = await transport.producer(topic);
      await dlq.send({ data: msg.data, properties: { ...msg.properties, [DEAD_LETTER_REASON_PROPERTY]: reason } });
      await msg.ack();
      log.warn({ service: service.id, deadLetterTopic: topic, messageId: msg.messageId, reason }, 'request dead-lettered');
      return Outcome.DeadLettered;
    } catch (err) {
      log.error({ err, service: service.id }, 'could not dead-letter a request; nacked');
      await msg.nack();
      return Outcome.Nacked;
    }
  }
}

function abortPromise(signal: AbortSignal): Promise<never> {
  const p = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  // Raced on every chunk; after the last one nobody waits on it, and that is fine.
  p.catch(() => undefined);
  return p;
}
