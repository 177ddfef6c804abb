import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import { decodeRequest } from '../envelope/request.js';
import { boundedText, encodeError, ErrorSeverity, observationText, wireError, type WireError } from '../envelope/response.js';
import { AbortedError, UnavailableError, errorMessage, isRetriable } from '../errors.js';
import { isAsyncIterable, type Plugin } from '../plugins/plugin.js';
import { prepareArguments } from '../arguments/prepare-arguments.js';
import { persistentTopic } from '../transport/topic-name.js';
import { defaultDeadLetterTopic, type IncomingMessage, type Producer, type Transport } from '../transport/transport.js';
import { answerProperties, DEAD_LETTER_REASON_PROPERTY, HOPS_PROPERTY, ID_PROPERTY, STREAM_PROPERTY, TOOL_PROPERTY } from '../envelope/properties.js';
import { readHops } from '../envelope/hops.js';
import type { WorkerLimits } from './limits.js';
import { PreparedCall, requestLog } from './prepared-call.js';
import { createSink, wholeAnswer, type ObservationSink } from './observation-sink.js';
import { DeliveryLedger, Handling } from './delivery-ledger.js';
import { injectTraceContext } from '../tracing/trace-context.js';
import { Outcome } from './outcome.js';
import { compose, type CallInput, type CallResult, type Interceptor, type Next, type PluginRun, type RunNext } from './interceptor.js';
import { CallRecord } from './call-record.js';
import { deadlineInterceptor } from './deadline-interceptor.js';
import { RunningCalls } from './running-calls.js';

export interface RequestHandlerDeps {
  readonly service: ToolService;
  readonly catalog: () => Catalog;
  readonly plugin: Plugin;
  readonly transport: Transport;
  readonly limits: WorkerLimits;
  readonly log: Logger;
  /** Aborted when the shutdown grace period is over. */
  readonly hardStop: AbortSignal;
  /** An abandoned call's plugin work ended: the intake may take requests again. */
  readonly abandonedEnded?: () => void;
  /**
   * False for a non-persistent request topic: a nack there loses the request, so every
   * failure is answered instead.
   */
  readonly redeliverable: boolean;
  /** Around the handling of each request (metrics, logging...), the first outermost. */
  readonly interceptors?: readonly Interceptor[];
}

/**
 * decode -> resolve -> prepare -> invoke -> publish -> ack, for one service. Every path
 * settles the message exactly once: answered then acked, nacked for redelivery, or
 * dead-lettered when nobody can be answered. Nacks are bounded by the service's redelivery
 * limit on every path, and happen only where the broker can redeliver.
 */
export class RequestHandler {
  private responses: Promise<Producer> | undefined;

  /** Calls in the plugin, for a cancel and the hard stop. */
  private readonly running: RunningCalls;

  /** Calls answered (timeout, cancel, hard stop) whose plugin work still runs. */
  private abandonedCalls = 0;

  /** Deliveries handled and answered here, by request id and delivery key; only a topic that redelivers needs it. */
  private readonly ledger: DeliveryLedger<CallResult> | undefined;

  /** The interceptors around handleCore, composed once. */
  private readonly chain: Next;

  /** The plugin interceptors around runPlugin, composed once. */
  private readonly runChain: RunNext;

  /** Read once: the level is set at start. */
  private readonly debug: boolean;

  /** The response producer once it is open: the hot path then skips an await per request. */
  private ready: Producer | undefined;

  constructor(private readonly deps: RequestHandlerDeps) {
    this.chain = compose(deps.interceptors ?? [], (input) => this.handleCore(input));
    this.running = new RunningCalls(deps.hardStop);
    // Around the wait for each plugin's answer: the running calls outermost, then the deadline.
    this.runChain = compose([this.running.interceptor, deadlineInterceptor], (run) => this.runPlugin(run));
    this.ledger = deps.redeliverable ? new DeliveryLedger<CallResult>(deps.limits.answeredMemory) : undefined;
    this.debug = deps.log.isLevelEnabled('debug');
  }

  /** The agent of request `id` stopped waiting: abort its call if it runs here. True if it did. */
  cancel(id: string): boolean {
    return this.running.cancel(id);
  }

  get abandoned(): number {
    return this.abandonedCalls;
  }

  /** True while so many calls are abandoned that the service must take no more requests (a limit of 0: never). */
  get blocked(): boolean {
    const max = this.deps.limits.maxAbandoned;
    return max > 0 && this.abandonedCalls >= max;
  }

  /**
   * The call was answered but its plugin still works (it ignores its signal): count it until
   * that work ends, and say so when the count reaches the limit and when it drops below.
   */
  private abandon(work: Promise<void>): void {
    const { limits, service, log } = this.deps;
    this.abandonedCalls++;
    if (this.abandonedCalls === limits.maxAbandoned) {
      log.warn(
        { service: service.id, abandoned: this.abandonedCalls },
        "calls past their timeout still run in the plugin: taking none of this service's requests until some end",
      );
    }
    const ended = (): void => {
      this.abandonedCalls--;
      if (this.abandonedCalls === limits.maxAbandoned - 1)
        log.info({ service: service.id, abandoned: this.abandonedCalls }, 'abandoned calls ended: taking requests again');
      this.deps.abandonedEnded?.();
    };
    work.then(ended, ended);
  }

  /** Let go of the worker's hard-stop signal: a service retired by a reload outlives nothing. */
  dispose(): void {
    this.running.dispose();
  }

  private producer(): Promise<Producer> {
    this.responses ??= this.deps.transport.producer(this.deps.service.responseQueue).then(
      (producer) => (this.ready = producer),
      (err: unknown) => {
        this.responses = undefined;
        throw err;
      },
    );
    return this.responses;
  }

  /**
   * Handle one delivery through the service's interceptors; `receivedAt` is when the intake
   * took it, `startedAt` when it let it start. Resolves to what the interceptors heard.
   */
  handle(msg: IncomingMessage, receivedAt?: number, startedAt = performance.now()): Promise<CallResult> {
    const input: CallInput = { service: this.deps.service, message: msg, receivedAt: receivedAt ?? startedAt, startedAt };
    return this.chain(input);
  }

  private handleCore(input: CallInput): Promise<CallResult> {
    const record = new CallRecord();
    const id = input.message.properties[ID_PROPERTY];
    if (!id) return this.deadLetterRecorded(input.message, record);
    // Only a topic that redelivers brings a message back, so only there is its delivery key read.
    return this.ledger ? this.handleRedeliverable(input, record, id, this.ledger) : this.answer(input, record, id);
  }

  private async deadLetterRecorded(msg: IncomingMessage, record: CallRecord): Promise<CallResult> {
    return record.ended(await this.deadLetter(msg, 'request has no id property; no agent could receive an answer'));
  }

  /** A delivery that may be a copy of one answered or being answered here. Not async: the common path adds no promise. */
  private handleRedeliverable(input: CallInput, record: CallRecord, id: string, ledger: DeliveryLedger<CallResult>): Promise<CallResult> {
    // The same on every delivery of one message: an agent's retry is a new message and runs.
    // Checked on every delivery, not only those counted as redelivered: a topic unload hands
    // unacked messages out again with a count of 0. Paired with the request id, which tells
    // apart what a transport's key alone may not (transport.ts, deliveryKey).
    const claim = ledger.claim(id, input.message.deliveryKey);
    if (!(claim instanceof Handling)) return this.settleCopy(input.message, record, id, claim);
    const handling = this.answer(input, record, id, claim);
    // answer() settles the claim only after an await (and whatever happens), so this comes first.
    ledger.begin(claim, handling);
    return handling;
  }

  /**
   * A copy of a delivery answered here (acked at once), or still being handled (an unload
   * mid-answer: it runs nothing and settles as the first does).
   */
  private async settleCopy(msg: IncomingMessage, record: CallRecord, id: string, first: Promise<CallResult> | true): Promise<CallResult> {
    if (this.debug) {
      const what = first === true ? 'redelivered request already answered; acked' : 'copy of a request still being answered; settles with it';
      this.deps.log.debug({ requestId: id, messageId: msg.messageId }, what);
    }
    if (first !== true && (await first).outcome === Outcome.Nacked) {
      await msg.nack();
      return record.ended(Outcome.Nacked);
    }
    await msg.ack();
    return record.ended(Outcome.Duplicate);
  }

  /**
   * Publishing the answer failed (broker gone, or the broker refused the message). Redelivery
   * may help, within the limit; past it, or where nothing is redelivered, the request is kept
   * on the dead-letter topic with the reason.
   */
  private async settleUnpublished(msg: IncomingMessage, id: string, err: unknown): Promise<Outcome> {
    const { service, log } = this.deps;
    const limit = service.maxRedeliveries ?? this.deps.limits.maxRedeliveries;
    if (!this.deps.redeliverable || msg.redeliveryCount >= limit) {
      return this.deadLetter(msg, `the answer could not be published: ${errorMessage(err)}`);
    }
    log.warn({ err, requestId: id, service: service.id, redelivery: msg.redeliveryCount }, 'could not publish the answer; request nacked');
    await msg.nack();
    return Outcome.Nacked;
  }

  /**
   * Answer a request with `err` without running anything (a full backlog), then ack it.
   * Publishing failures are settled as in handle().
   */
  async refuse(msg: IncomingMessage, err: UnavailableError): Promise<Outcome> {
    const id = msg.properties[ID_PROPERTY];
    if (!id) return this.deadLetter(msg, 'request has no id property; no agent could receive an answer');
    try {
      return await this.answerError(msg, wireError(err), answerProperties(id));
    } catch (publishErr) {
      return this.deadLetter(msg, `${err.message}, and the refusal could not be published: ${errorMessage(publishErr)}`);
    }
  }

  /**
   * Answer the request, or settle it when its answer could not be published; the ledger hears
   * how `claim` settled. One async function with two try blocks, not two functions: the outer
   * one cost a promise and a resumption a request (docs/benchmarks-rationale.md).
   */
  private async answer(input: CallInput, record: CallRecord, id: string, claim?: Handling<CallResult>): Promise<CallResult> {
    const { service, limits } = this.deps;
    const msg = input.message;
    let answered = false;
    try {
      const properties = answerProperties(id);
      // The answer carries the worker's span back to the agent (no-op while tracing is off).
      injectTraceContext(properties);
      let sink: ObservationSink | undefined;
      let call: PreparedCall | undefined;
      try {
        const request = decodeRequest(msg.data, limits.maxPayloadBytes);
        // Past the limit, refused before anything runs: an agent reaching the fleet again and again.
        const hops = readHops(msg.properties[HOPS_PROPERTY]);
        const { tool, config } = this.deps.catalog().resolve(service, request.config, msg.properties[TOOL_PROPERTY]);
        record.tool = tool;
        const args = prepareArguments(tool?.parameters ?? [], tool?.runtimeParameters ?? {}, request.arguments);
        const streamProp = msg.properties[STREAM_PROPERTY];
        const stream = streamProp === undefined ? service.stream === 'stream' : streamProp === 'true' || streamProp === '1';
        const producer = this.ready ?? (await this.producer());
        // The one deadline of the call: the tool's, else its service's, else the worker's.
        const timeoutMs = tool?.timeoutMs ?? service.timeoutMs ?? limits.timeoutMs;
        call = new PreparedCall({ requestId: id, service, tool, config, arguments: args, user: request.user, hops, stream, timeoutMs }, this.deps.log);
        if (this.debug) call.log.debug({ stream, redelivery: msg.redeliveryCount }, 'invoking tool');
        this.running.admit();
        const invokedAt = (record.pluginStartedAt = performance.now());
        const observation = this.deps.plugin.invoke(call);
        if (typeof observation === 'string' && !stream) {
          // The usual answer: whole at once, one message, and no sink to gather it.
          record.pluginEndedAt = performance.now();
          const data = wholeAnswer(observation, limits.maxObservationBytes);
          record.answering(input);
          await producer.send({ data, properties });
        } else {
          sink = createSink(stream, producer, properties, limits.maxObservationBytes);
          if (typeof observation === 'string') {
            record.pluginEndedAt = performance.now();
            sink.write(observation);
          } else {
            try {
              await this.runChain({ requestId: id, call, invokedAt, observation, sink, abort: PreparedCall.abortOf(call) });
            } finally {
              record.pluginEndedAt = performance.now();
            }
          }
          record.answering(input);
          await sink.end();
        }
        await msg.ack();
        answered = true;
        return record.ended(Outcome.Answered);
      } catch (err) {
        // A plugin that threw as it was called has still had its time.
        if (record.pluginStartedAt !== undefined) record.pluginEndedAt ??= performance.now();
        // Nothing more of this answer may go out once its final (error) message is decided.
        sink?.abort();
        // A request that failed before it became a call logs as one would.
        const log = call?.log ?? requestLog(this.deps.log, id, record.tool);
        const outcome = await this.fail(input, record, err, properties, sink?.started ?? false, log);
        answered = outcome !== Outcome.Nacked;
        return record.ended(outcome);
      }
    } catch (err) {
      // The final (error) message could not be published either.
      return record.ended(await this.settleUnpublished(msg, id, err));
    } finally {
      // Reached only after an await, so handleRedeliverable's begin() came first.
      if (claim !== undefined) this.ledger?.settle(claim, answered);
    }
  }

  /** The chain's core: wait for what the plugin answers and write it, unless the run is aborted first. */
  private async runPlugin(run: PluginRun): Promise<void> {
    const { abort, sink, observation } = run;
    const consumed = isAsyncIterable(observation)
      ? (async () => {
          // for-await returns the plugin's iterator when this loop leaves early.
          for await (const chunk of observation) {
            if (abort.reason !== undefined) return;
            sink.write(observationText(chunk));
          }
        })()
      : observation.then((text) => {
          if (abort.reason === undefined) sink.write(observationText(text));
        });
    try {
      // A plugin that ignores its signal still cannot hold the request past its abort.
      // One race for the whole answer, not one per chunk: a stream of 100 chunks paid 100.
      await abort.race(consumed);
    } catch (err) {
      if (abort.reason !== undefined) this.abandon(consumed);
      else consumed.catch(() => undefined);
      throw abort.reason ?? err;
    }
  }

  /**
   * Settle a request that did not succeed. Redelivery is for work nobody has seen: once
   * chunks of a stream reached the agent, a retry would repeat them, so the error is answered.
   */
  private async fail(input: CallInput, record: CallRecord, err: unknown, properties: Record<string, string>, started: boolean, log: Logger): Promise<Outcome> {
    const { limits, service, hardStop, redeliverable } = this.deps;
    const msg = input.message;
    if (err instanceof AbortedError && hardStop.aborted && !started) {
      if (redeliverable) {
        log.warn({ service: service.id }, 'interrupted by shutdown; request nacked for another worker');
        await msg.nack();
        return Outcome.Nacked;
      }
      // Nothing would come back of a nack: the agent hears now rather than at its timeout.
      err = new UnavailableError('the tool worker is shutting down; try again');
    }
    if (redeliverable && isRetriable(err) && !started && msg.redeliveryCount < (service.maxRedeliveries ?? limits.maxRedeliveries)) {
      log.warn({ err, service: service.id, redelivery: msg.redeliveryCount }, 'transient failure; request nacked for redelivery');
      await msg.nack();
      return Outcome.Nacked;
    }
    const e = wireError(err);
    record.errorType = e.type;
    if (e.severity === ErrorSeverity.Internal) log.error({ err, service: service.id }, 'tool failed unexpectedly');
    else log.info({ service: service.id, errorType: e.type, errorMessage: e.message }, 'request answered with an error');
    record.answering(input);
    return this.answerError(msg, e, properties);
  }

  /** Publish the error as the final answer, then ack. Throws when publishing fails. */
  private async answerError(msg: IncomingMessage, error: WireError, properties: Record<string, string>): Promise<Outcome> {
    await (this.ready ?? (await this.producer())).send({ data: encodeError(error.type, error.message), properties });
    await msg.ack();
    return Outcome.Failed;
  }

  private async deadLetter(msg: IncomingMessage, reason: string): Promise<Outcome> {
    const { service, transport, log } = this.deps;
    // Persistent even for a non-persistent request topic: nobody may be reading it yet.
    const topic = persistentTopic(defaultDeadLetterTopic(service.requestQueue, service.subscription));
    try {
      const dlq = await transport.producer(topic);
      await dlq.send({ data: msg.data, properties: { ...msg.properties, [DEAD_LETTER_REASON_PROPERTY]: boundedText(reason) } });
      await msg.ack();
      log.warn({ service: service.id, deadLetterTopic: topic, messageId: msg.messageId, reason }, 'request dead-lettered');
      return Outcome.DeadLettered;
    } catch (err) {
      // The broker refuses even the dead-letter topic: it is failing as a whole. Redelivery
      // brings the request back once it recovers; a non-persistent topic has no redelivery.
      log.error({ err, service: service.id, reason, redeliverable: this.deps.redeliverable }, 'could not dead-letter a request; nacked');
      await msg.nack();
      return Outcome.Nacked;
    }
  }
}
