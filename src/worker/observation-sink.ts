import { encodeChunk } from '../envelope/response.js';
import { PayloadTooLargeError } from '../errors.js';
import type { Producer } from '../transport/transport.js';
import { SEQ_PROPERTY } from '../envelope/properties.js';

/**
 * Where a tool's chunks go. Single mode keeps them and sends one message at the end (what
 * today's agents read); stream mode sends them as they come (joining a burst, see
 * streamSink), then a final message. Both cap the observation's total size, so a
 * runaway tool cannot exhaust memory.
 */
export interface ObservationSink {
  /**
   * Take the next chunk. Synchronous: a stream of 100 chunks paid a promise and a turn of
   * the microtask queue per chunk for nothing (the sink never waits). Throws when the
   * observation grows past its limit or an earlier chunk could not be sent.
   */
  write(text: string): void;
  /** Send the final message; resolves when the broker has every message of the answer. */
  end(): Promise<void>;
  /** True once anything reached the agent (a retry would then repeat chunks). */
  readonly started: boolean;
  /** The answer failed: drop what has not been sent, so nothing follows the error message. */
  abort(): void;
}

export function createSink(stream: boolean, producer: Producer, properties: Readonly<Record<string, string>>, maxBytes: number): ObservationSink {
  if (!stream) return new SingleSink(producer, properties, maxBytes);
  let bytes = 0;
  return streamSink(producer, properties, (text) => {
    const n = chunkBytes(bytes, text, maxBytes);
    bytes += n;
    return n;
  });
}

/**
 * The UTF-8 bytes of a chunk that an observation of `bytes` so far may still take; throws
 * when it would pass `maxBytes`. UTF-8 takes at least a byte per UTF-16 unit: a string too
 * long by its length is refused before it is measured, which would flatten and scan it (tens
 * of ms of event loop for a tool's 50 MB answer, felt by every other request).
 */
function chunkBytes(bytes: number, text: string, maxBytes: number): number {
  if (bytes + text.length > maxBytes) throw tooLarge(maxBytes);
  const n = Buffer.byteLength(text, 'utf8');
  if (bytes + n > maxBytes) throw tooLarge(maxBytes);
  return n;
}

/**
 * The one message of an observation the plugin gave whole in single mode, where no sink is
 * made (a request's usual path). Throws as a sink's write would when it is too large.
 */
export function wholeAnswer(text: string, maxBytes: number): Buffer {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: a text under a third of the limit needs no count.
  if (text.length * 3 > maxBytes) chunkBytes(0, text, maxBytes);
  return encodeChunk(text, true);
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`the tool's observation exceeds ${maxBytes} bytes, the most this worker sends`);
}

/**
 * Single mode: the chunks are kept and sent as one message at the end. A class, not closures
 * over an object literal: one object a request instead of five functions and two objects (the
 * sink is made for every request, and most answers are a single chunk).
 */
class SingleSink implements ObservationSink {
  readonly started = false;
  private parts: string[] | undefined;
  private first: string | undefined;
  private bytes = 0;

  constructor(
    private readonly producer: Producer,
    private readonly properties: Readonly<Record<string, string>>,
    private readonly maxBytes: number,
  ) {}

  write(text: string): void {
    this.bytes += chunkBytes(this.bytes, text, this.maxBytes);
    if (this.first === undefined) this.first = text;
    else (this.parts ??= [this.first]).push(text);
  }

  /** The send's own promise: not an async method, which would wrap it in one more. */
  end(): Promise<void> {
    const text = this.parts ? this.parts.join('') : (this.first ?? '');
    return this.producer.send({ data: encodeChunk(text, true), properties: this.properties });
  }

  abort(): void {
    this.parts = undefined;
    this.first = undefined;
  }
}

/**
 * Chunk messages unconfirmed at once before further chunks wait. One: a wider window cuts a
 * burst into more messages, each a write and a confirmation (docs/benchmarks-rationale.md).
 */
export const STREAM_WINDOW = 1;
/** More waiting chunks than this are a burst and leave joined; this many or fewer keep their own messages. */
export const JOIN_AFTER = 8;
/** Waiting text is sent at this size even while a send is unconfirmed (bounds the buffer and the frame). */
const MAX_JOINED_BYTES = 64 * 1024;

/**
 * Stream mode. Chunks leave at the end of the event-loop turn they were written in, when
 * fewer than STREAM_WINDOW chunk messages are unconfirmed; otherwise they wait, and leave
 * when a send is confirmed. Either way the chunks that leave together go each on its own
 * when there are a few (at most JOIN_AFTER), joined into one message when they are a burst.
 * At the end a joined burst rides on the final message; otherwise the final message is
 * empty. (A tool that yields its whole answer in one turn therefore costs one message: the
 * burst is still waiting for the end of the turn when the answer ends.)
 *
 * A tool that yields slowly (an LLM, a network source) never has chunks waiting, so each is
 * a message of its own and none waits; a short stream keeps its chunk boundaries; a tool
 * that yields 100 chunks in one go costs 2 messages instead of 101 — on the WebSocket
 * transport every message is a socket write on both sides and a broker confirmation, and on
 * a non-persistent response topic a burst the agent cannot absorb is dropped by the broker.
 * Order is kept: a producer publishes in send order. The final message is sent only once
 * every chunk is confirmed. Each message is numbered (SEQ_PROPERTY): the broker may still
 * drop one on a non-persistent topic, and the number is how the agent finds out.
 */
function streamSink(producer: Producer, properties: Readonly<Record<string, string>>, count: (text: string) => number): ObservationSink {
  let seq = 0;
  /** The next message's properties: the answer's, and its place in the answer. */
  const numbered = (): Record<string, string> => ({ ...properties, [SEQ_PROPERTY]: String(seq++) });
  let inFlight = 0;
  let waiting: string[] = [];
  let waitingBytes = 0;
  /** The first send that failed, boxed: a rejection's reason may be anything, undefined too. */
  let failure: { readonly reason: unknown } | undefined;
  let drained: (() => void) | undefined;
  /** Set while the chunks of this turn wait for its end. */
  let turn: NodeJS.Immediate | undefined;
  const endOfTurn = () => {
    turn = undefined;
    if (inFlight < STREAM_WINDOW && waiting.length > 0 && failure === undefined) release();
  };

  const settle = () => {
    inFlight--;
    if (inFlight < STREAM_WINDOW && waiting.length > 0 && failure === undefined) release();
    drained?.();
  };
  const send = (text: string) => {
    inFlight++;
    sink.started = true;
    producer.send({ data: encodeChunk(text, false), properties: numbered() }).then(settle, (err: unknown) => {
      failure ??= { reason: err };
      settle();
    });
  };
  const take = (): string[] => {
    const w = waiting;
    waiting = [];
    waitingBytes = 0;
    return w;
  };
  /** Let the waiting chunks go: each alone when they are few, joined when they are a burst. */
  const release = () => {
    const w = take();
    if (w.length <= JOIN_AFTER) for (const t of w) send(t);
    else send(w.join(''));
  };
  const sink = {
    started: false,
    write(text: string) {
      if (failure !== undefined) throw failure.reason;
      if (text === '') return;
      const bytes = count(text);
      waiting.push(text);
      waitingBytes += bytes;
      if (waitingBytes >= MAX_JOINED_BYTES) send(take().join(''));
      else if (inFlight < STREAM_WINDOW) turn ??= setImmediate(endOfTurn);
    },
    async end() {
      clearImmediate(turn);
      turn = undefined;
      // A burst still waiting goes with the final message; a few chunks keep their own.
      let tail = '';
      if (failure === undefined && waiting.length > JOIN_AFTER) tail = take().join('');
      else if (failure === undefined && waiting.length > 0) release();
      while (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      drained = undefined;
      if (failure !== undefined) throw failure.reason;
      if (tail) sink.started = true;
      await producer.send({ data: encodeChunk(tail, true), properties: numbered() });
    },
    abort() {
      clearImmediate(turn);
      turn = undefined;
      take();
      failure ??= { reason: new Error('answer aborted') };
    },
  };
  return sink;
}
