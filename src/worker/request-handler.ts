import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import { decodeRequest } from '../envelope/request.js';
import { encodeError, observationText, wireError } from '../envelope/response.js';
import { AbortedError, TimeoutError, isRetriable } from '../errors.js';
import { isAsyncIterable, type Plugin } from '../plugins/plugin.js';
import { prepareArguments } from '../tools/prepare-arguments.js';
import { persistentTopic } from '../transport/topic-name.js';
import { defaultDeadLetterTopic, type IncomingMessage, type Producer, type Transport } from '../transport/transport.js';
import { DEAD_LETTER_REASON_PROPERTY, STREAM_PROPERTY, TOOL_PROPERTY, type WorkerLimits } from './limits.js';
import { CallAbort } from './call-abort.js';
import { createSink, type ObservationSink } from './observation-sink.js';

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

  /** Calls in flight, aborted together on hard stop: one listener per handler, not one per request. */
  private readonly active = new Set<CallAbort>();

  constructor(private readonly deps: RequestHandlerDeps) {
    this.debug = deps.log.isLevelEnabled('debug');
    deps.hardStop.addEventListener(
      'abort',
      () => {
        for (const call of this.active) call.abort(shutdownError());
      },
      { once: true },
    );
  }

  /** Read once: the level is set at start. */
  private readonly debug: boolean;

  /** The response producer once it is open: the hot path then skips an await per request. */
  private ready: Producer | undefined;

  private producer(): Promise<Producer> {
    this.responses ??= this.deps.transport.producer(this.deps.service.responseQueue).then(
      (p) => (this.ready = p),
      (err: unknown) => {
        this.responses = undefined;
        throw err;
      },
    );
    return this.responses;
  }

  async handle(msg: IncomingMessage): Promise<Outcome> {
    const { service, log: baseLog } = this.deps;
    const id = msg.properties['id'];
    if (!id) return this.deadLetter(msg, 'request has no id property; no agent could receive an answer');
    try {
      return await this.answer(msg, id);
    } catch (err) {
      // Publishing failed (broker gone): the request comes back and is answered then.
      baseLog.warn({ err, requestId: id, service: service.id }, 'could not publish the answer; request nacked');
      await msg.nack();
      return Outcome.Nacked;
    }
  }

  private async answer(msg: IncomingMessage, id: string): Promise<Outcome> {
    const { service, limits, hardStop } = this.deps;
    const properties = { id };
    let toolName: string | undefined;
    // One child logger per request, made only when something logs or the plugin reads `log`
    // (a pino child costs on the hot path, and most answered requests log nothing).
    let callLog: Logger | undefined;
    const logFor = (): Logger => (callLog ??= this.deps.log.child({ requestId: id, tool: toolName }));
    let sink: ObservationSink | undefined;
    const call = new CallAbort();
    try {
      const request = decodeRequest(msg.data, limits.maxPayloadBytes);
      const { tool, config } = this.deps.catalog().resolve(service, request.config, msg.properties[TOOL_PROPERTY]);
      toolName = tool?.name;
      const args = prepareArguments(tool?.parameters ?? [], tool?.runtimeParameters ?? {}, request.arguments);
      const timeoutMs = tool?.timeoutMs ?? service.timeoutMs ?? limits.timeoutMs;
      if (hardStop.aborted) call.abort(shutdownError());
      else this.active.add(call);
      call.deadline(timeoutMs, () => new TimeoutError(`tool ${toolName ?? service.id} did not finish within ${timeoutMs} ms`));

      const streamProp = msg.properties[STREAM_PROPERTY];
      const stream = streamProp === undefined ? service.stream === 'stream' : streamProp === 'true' || streamProp === '1';
      sink = createSink(stream, this.ready ?? (await this.producer()), properties, limits.maxObservationBytes);
      if (this.debug) logFor().debug({ stream, redelivery: msg.redeliveryCount }, 'invoking tool');
      const observation = this.deps.plugin.invoke({
        requestId: id,
        service,
        tool,
        config,
        arguments: args,
        ...(request.user !== undefined ? { user: request.user } : {}),
        // Getters: the AbortController and the child logger are made only for a plugin that reads them.
        get signal() {
          return call.signal;
        },
        get log() {
          return logFor();
        },
      });
      const out = sink;
      const consumed = isAsyncIterable(observation)
        ? (async () => {
            // for-await returns the plugin's iterator when this loop leaves early.
            for await (const chunk of observation) {
              if (call.reason !== undefined) return;
              out.write(observationText(chunk));
            }
          })()
        : observation.then((text) => {
            if (call.reason === undefined) out.write(observationText(text));
          });
      try {
        // A plugin that ignores its signal still cannot hold the request past its timeout.
        // One race for the whole answer, not one per chunk: a stream of 100 chunks paid 100.
        await Promise.race([consumed, call.aborted]);
      } catch (err) {
        consumed.catch(() => undefined);
        throw call.reason ?? err;
      }
      await sink.end();
      await msg.ack();
      // Per-request success is a debug line: at thousands of requests a second an info line
      // each was the worker's largest cost after the socket writes. Counts are in /metrics.
      if (this.debug) logFor().debug({ outcome: Outcome.Answered }, 'request answered');
      return Outcome.Answered;
    } catch (err) {
      // Nothing more of this answer may go out once its final (error) message is decided.
      sink?.abort();
      return this.fail(msg, err, properties, sink?.started ?? false, logFor());
    } finally {
      call.dispose();
      this.active.delete(call);
    }
  }

  /**
   * Settle a request that did not succeed. Redelivery is for work nobody has seen: once
   * chunks of a stream reached the agent, a retry would repeat them, so the error is answered.
   */
  private async fail(msg: IncomingMessage, err: unknown, properties: Record<string, string>, started: boolean, log: Logger): Promise<Outcome> {
    const { limits, service, hardStop } = this.deps;
    if (err instanceof AbortedError && hardStop.aborted && !started) {
      log.warn({ service: service.id }, 'interrupted by shutdown; request nacked for another worker');
      await msg.nack();
      return Outcome.Nacked;
    }
    if (isRetriable(err) && !started && msg.redeliveryCount < (service.maxRedeliveries ?? limits.maxRedeliveries)) {
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
    // Persistent even for a non-persistent request topic: nobody may be reading it yet.
    const topic = persistentTopic(defaultDeadLetterTopic(service.requestQueue, service.subscription));
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

/** Why in-flight calls end when the grace period is over. */
function shutdownError(): AbortedError {
  return new AbortedError('the worker is shutting down');
}
