import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { decodeResponse } from '../src/envelope/response.js';
import { AbortedError, TimeoutError } from '../src/errors.js';
import type { IncomingMessage, Producer, Subscription, Transport } from '../src/transport/transport.js';
import { SEQ_PROPERTY, STREAM_PROPERTY } from '../src/envelope/properties.js';
import { LatencyRecorder, type LatencySummary } from './latency-recorder.js';
import { benchRequestBody, type PayloadShape } from './request-payload.js';

export interface LoadOptions {
  readonly transport: Transport;
  readonly requestTopic: string;
  readonly responseTopic: string;
  /** Requests in flight at once (K agents each waiting for their answer). */
  readonly concurrency: number;
  /** Measured requests; the run ends when they are all answered (or timed out). */
  readonly requests?: number;
  /** Or: issue requests for this long, then wait for the outstanding ones. */
  readonly durationMs?: number;
  /** Load first, not recorded, for this long: JIT, connections, broker caches. */
  readonly warmupMs: number;
  readonly shape: PayloadShape;
  /** Ask for a streamed answer (the toolwire-stream property). */
  readonly stream: boolean;
  /** A request with no final answer after this counts as timed out. */
  readonly answerTimeoutMs: number;
  /** How long to keep probing before the target answers its first request. */
  readonly readyTimeoutMs: number;
  readonly log: Logger;
  readonly signal?: AbortSignal;
  /** Called about four times a second while measuring. */
  readonly onProgress?: (p: LoadProgress) => void;
  /** Once every answer is in or timed out, before the agents' subscription closes. */
  readonly settled?: () => Promise<void>;
}

export interface LoadProgress {
  readonly phase: 'ready' | 'warmup' | 'measure' | 'drain';
  readonly done: number;
  /** Known when the run is bounded by a request count. */
  readonly total: number | undefined;
  readonly elapsedMs: number;
  /** Of the run, when bounded by duration. */
  readonly durationMs: number | undefined;
  readonly ratePerSec: number;
  readonly p99Ms: number;
}

export interface LoadResult {
  readonly requests: number;
  readonly answered: number;
  readonly errors: number;
  readonly timeouts: number;
  /** Answers whose text was not what the echo was asked for. */
  readonly wrongAnswers: number;
  /** Response messages whose id was not pending (late duplicates, answers to timed-out requests). */
  readonly strayMessages: number;
  readonly responseMessages: number;
  /** Wall clock (Date.now()) when the measured phase began, to align resource samples. */
  readonly startedAtMs: number;
  readonly elapsedMs: number;
  readonly throughputPerSec: number;
  readonly latency: LatencySummary;
  readonly curve: [number, number][];
  /** Answers completed in each second of the measured phase. */
  readonly perSecond: number[];
  readonly firstErrors: string[];
}

interface Pending {
  readonly startedAt: number;
  readonly deadline: number;
  readonly record: boolean;
  readonly settle: (outcome: 'answered' | 'error' | 'timeout') => void;
  text: string;
  /** The next SEQ_PROPERTY a streamed answer should carry. */
  seq: number;
}

/**
 * Agents, as many as `concurrency`, each sending a request and waiting for its final answer
 * before sending the next, over one producer and one response subscription, correlated by
 * the `id` property exactly as TrustGraph's RequestResponseClient does. Every latency (send
 * to final answer) goes into an HdrHistogram.
 */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const gen = new LoadGenerator(o);
  try {
    const result = await gen.run();
    await o.settled?.();
    return result;
  } finally {
    await gen.close();
  }
}

class LoadGenerator {
  private readonly recorder = new LatencyRecorder();
  private readonly pending = new Map<string, Pending>();
  private readonly request: ReturnType<typeof benchRequestBody>;
  private readonly properties: Record<string, string>;
  private subscription: Subscription | undefined;
  private producer: Producer | undefined;
  private routing: Promise<void> = Promise.resolve();
  private sweeper: NodeJS.Timeout | undefined;
  private counts = { answered: 0, errors: 0, timeouts: 0, wrong: 0, stray: 0, messages: 0 };
  private readonly firstErrors: string[] = [];
  private perSecond: number[] = [];
  private measureStart = 0;
  /** When the last answer of the measured phase arrived. */
  private lastCompletion = 0;

  constructor(private readonly o: LoadOptions) {
    this.request = benchRequestBody(o.shape);
    this.properties = o.stream ? { [STREAM_PROPERTY]: 'true' } : {};
  }

  async run(): Promise<LoadResult> {
    const { o } = this;
    this.subscription = await o.transport.subscribe(
      { topic: o.responseTopic, subscription: `bench-agent-${randomUUID()}`, type: 'Exclusive', receiverQueueSize: 1000 },
      o.signal,
    );
    this.routing = this.route(this.subscription);
    this.producer = await o.transport.producer(o.requestTopic, o.signal);
    this.sweeper = setInterval(() => this.sweep(), 250);
    this.sweeper.unref();

    await this.waitReady();
    if (o.warmupMs > 0) await this.phase('warmup', undefined, o.warmupMs, false);
    this.counts = { answered: 0, errors: 0, timeouts: 0, wrong: 0, stray: 0, messages: 0 };
    this.firstErrors.length = 0;
    const startedAtMs = Date.now();
    const started = performance.now();
    this.measureStart = started;
    this.perSecond = [];
    this.lastCompletion = started;
    const issued = await this.phase('measure', o.requests, o.durationMs, true);
    // Up to the last answer: a lost request's wait for its timeout is not load.
    const elapsedMs = Math.max(1, this.lastCompletion - started);
    const c = this.counts;
    return {
      requests: issued,
      answered: c.answered,
      errors: c.errors,
      timeouts: c.timeouts,
      wrongAnswers: c.wrong,
      strayMessages: c.stray,
      responseMessages: c.messages,
      startedAtMs,
      elapsedMs,
      throughputPerSec: ((c.answered + c.errors) * 1000) / elapsedMs,
      latency: this.recorder.summary(),
      curve: this.recorder.curve(),
      perSecond: this.perSecond,
      firstErrors: [...this.firstErrors],
    };
  }

  /** Probe one request at a time until the target answers (it may still be subscribing). */
  private async waitReady(): Promise<void> {
    const deadline = performance.now() + this.o.readyTimeoutMs;
    for (let attempt = 1; ; attempt++) {
      this.checkAborted();
      const outcome = await this.one(false, Math.min(2_000, this.o.answerTimeoutMs));
      if (outcome === 'answered') return;
      if (performance.now() > deadline) {
        throw new TimeoutError(`the target on ${this.o.requestTopic} did not answer within ${this.o.readyTimeoutMs} ms (${attempt} probes)`);
      }
      this.o.log.debug({ attempt, outcome }, 'target not answering yet');
    }
  }

  /** Run requests with `concurrency` agents until `count` are issued or `durationMs` passes. */
  private async phase(name: 'warmup' | 'measure', count: number | undefined, durationMs: number | undefined, record: boolean): Promise<number> {
    const started = performance.now();
    let issued = 0;
    let done = 0;
    const more = (): boolean => {
      if (this.o.signal?.aborted) return false;
      if (count !== undefined && issued >= count) return false;
      if (durationMs !== undefined && performance.now() - started >= durationMs) return false;
      issued++;
      return true;
    };
    const progress = setInterval(() => {
      const elapsedMs = performance.now() - started;
      const draining = (count !== undefined && issued >= count) || (durationMs !== undefined && elapsedMs >= durationMs);
      this.o.onProgress?.({
        phase: draining ? 'drain' : name,
        done,
        total: count,
        elapsedMs,
        durationMs,
        ratePerSec: (done * 1000) / Math.max(1, elapsedMs),
        p99Ms: record && this.recorder.count > 0 ? this.recorder.summary().p99Ms : 0,
      });
    }, 250);
    progress.unref();
    const agent = async (): Promise<void> => {
      while (more()) {
        await this.one(record, this.o.answerTimeoutMs);
        done++;
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.max(1, this.o.concurrency) }, agent));
    } finally {
      clearInterval(progress);
    }
    this.checkAborted();
    return issued;
  }

  /** One request: send, wait for its final answer (or its timeout). */
  private one(record: boolean, timeoutMs: number): Promise<'answered' | 'error' | 'timeout'> {
    const id = randomUUID();
    return new Promise((resolve) => {
      const startedAt = performance.now();
      const entry: Pending = {
        startedAt,
        deadline: startedAt + timeoutMs,
        record,
        text: '',
        seq: 0,
        settle: (outcome) => {
          if (!this.pending.delete(id)) return;
          if (outcome === 'timeout') this.counts.timeouts++;
          resolve(outcome);
        },
      };
      this.pending.set(id, entry);
      this.producer!.send({ data: this.request.body, properties: { ...this.properties, id } }).catch((err: unknown) => {
        this.noteError(`send failed: ${(err as Error).message}`);
        this.counts.errors++;
        entry.settle('error');
      });
    });
  }

  private async route(sub: Subscription): Promise<void> {
    for await (const msg of sub) {
      void msg.ack();
      this.onResponse(msg);
    }
  }

  private onResponse(msg: IncomingMessage): void {
    this.counts.messages++;
    const id = msg.properties['id'];
    const p = id === undefined ? undefined : this.pending.get(id);
    if (p === undefined) {
      this.counts.stray++;
      return;
    }
    let r;
    try {
      r = decodeResponse(msg.data);
    } catch (err) {
      this.noteError(`undecodable response: ${(err as Error).message}`);
      this.counts.errors++;
      p.settle('error');
      return;
    }
    if (r.error) {
      this.noteError(`${r.error.type}: ${r.error.message}`);
      this.counts.errors++;
      if (p.record) this.lastCompletion = performance.now();
      p.settle('error');
      return;
    }
    const seq = msg.properties[SEQ_PROPERTY];
    if (seq !== undefined && Number(seq) !== p.seq++) {
      // A message of the stream was dropped (non-persistent topic under load): the answer is
      // broken, and its agent need not wait for the timeout to find out.
      this.noteError(`streamed answer broken: message ${p.seq - 1} missing (got ${seq})`);
      this.counts.errors++;
      if (p.record) this.lastCompletion = performance.now();
      p.settle('error');
      return;
    }
    p.text += r.response;
    if (!r.endOfStream) return;
    const now = performance.now();
    if (p.record) {
      this.lastCompletion = now;
      this.recorder.recordMs(now - p.startedAt);
      const second = Math.floor((now - this.measureStart) / 1000);
      this.perSecond[second] = (this.perSecond[second] ?? 0) + 1;
    }
    if (p.text !== this.request.expectedResponse) {
      this.counts.wrong++;
      this.noteError(`wrong answer: ${p.text.length} characters, expected ${this.request.expectedResponse.length}`);
    }
    this.counts.answered++;
    p.settle('answered');
  }

  private sweep(): void {
    const now = performance.now();
    for (const p of this.pending.values()) {
      if (p.deadline <= now) p.settle('timeout');
    }
  }

  private noteError(text: string): void {
    if (this.firstErrors.length < 10) this.firstErrors.push(text);
  }

  private checkAborted(): void {
    if (this.o.signal?.aborted) throw new AbortedError('benchmark aborted', { cause: this.o.signal.reason });
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    for (const p of [...this.pending.values()]) p.settle('timeout');
    await this.subscription?.close().catch(() => undefined);
    await this.routing.catch(() => undefined);
    this.recorder.destroy();
  }
}
