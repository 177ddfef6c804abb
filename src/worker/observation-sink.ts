import { encodeChunk } from '../envelope/response.js';
import { PayloadTooLargeError } from '../errors.js';
import type { Producer } from '../transport/transport.js';

/**
 * Where a tool's chunks go. Single mode keeps them and sends one message at the end (what
 * today's agents read); stream mode sends them as they come (joining a burst, see
 * streamSink), then a final empty message. Both cap the observation's total size, so a
 * runaway tool cannot exhaust memory.
 */
export interface ObservationSink {
  write(text: string): Promise<void>;
  /** Send the final message; resolves when the broker has every message of the answer. */
  end(): Promise<void>;
  /** True once anything reached the agent (a retry would then repeat chunks). */
  readonly started: boolean;
  /** The answer failed: drop what has not been sent, so nothing follows the error message. */
  abort(): void;
}

export function createSink(
  stream: boolean,
  producer: Producer,
  properties: Readonly<Record<string, string>>,
  maxBytes: number,
): ObservationSink {
  let bytes = 0;
  /** Adds a chunk to the observation's size; returns the chunk's bytes. */
  const count = (text: string): number => {
    const n = Buffer.byteLength(text, 'utf8');
    bytes += n;
    if (bytes > maxBytes) {
      throw new PayloadTooLargeError(`the tool's observation exceeds ${maxBytes} bytes, the most this worker sends`);
    }
    return n;
  };
  if (!stream) {
    const parts: string[] = [];
    return {
      started: false,
      async write(text) {
        count(text);
        parts.push(text);
      },
      async end() {
        await producer.send({ data: encodeChunk(parts.length === 1 ? parts[0]! : parts.join(''), true), properties });
      },
      abort() {
        parts.length = 0;
      },
    };
  }
  return streamSink(producer, properties, count);
}

/** Chunk messages unconfirmed at once; chunks written while the window is full are joined. */
export const STREAM_WINDOW = 2;
/** A joined message is sent at this size even when the window is full (bounds the buffer). */
const MAX_JOINED_BYTES = 64 * 1024;

/**
 * Stream mode. Chunks go out as they come while fewer than STREAM_WINDOW sends are
 * unconfirmed; chunks that arrive while the window is full wait and leave together, as one
 * message, when a send is confirmed. A tool that yields slowly (an LLM, a network source)
 * never fills the window, so each of its chunks is a message of its own and none waits; a
 * tool that yields a burst (100 chunks in one go) costs a few messages instead of 100 — on
 * the WebSocket transport every message is a socket write on both sides and a broker
 * confirmation. Order is kept: a producer publishes in send order. The final message is
 * always empty, as before.
 */
function streamSink(producer: Producer, properties: Readonly<Record<string, string>>, count: (text: string) => number): ObservationSink {
  let inFlight = 0;
  let waiting: string[] = [];
  let waitingBytes = 0;
  let failure: unknown;
  let drained: (() => void) | undefined;

  const settle = () => {
    inFlight--;
    if (waiting.length > 0 && inFlight < STREAM_WINDOW && failure === undefined) sendWaiting();
    drained?.();
  };
  const send = (text: string) => {
    inFlight++;
    sink.started = true;
    producer.send({ data: encodeChunk(text, false), properties }).then(settle, (err: unknown) => {
      failure ??= err;
      settle();
    });
  };
  const sendWaiting = () => {
    const text = waiting.length === 1 ? waiting[0]! : waiting.join('');
    waiting = [];
    waitingBytes = 0;
    send(text);
  };
  const sink = {
    started: false,
    async write(text: string) {
      if (failure !== undefined) throw failure;
      if (text === '') return;
      const bytes = count(text);
      if (inFlight < STREAM_WINDOW && waiting.length === 0) {
        send(text);
        return;
      }
      waiting.push(text);
      waitingBytes += bytes;
      if (waitingBytes >= MAX_JOINED_BYTES) sendWaiting();
    },
    async end() {
      if (waiting.length > 0 && failure === undefined) sendWaiting();
      while (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      drained = undefined;
      if (failure !== undefined) throw failure;
      await producer.send({ data: encodeChunk('', true), properties });
    },
    abort() {
      waiting = [];
      waitingBytes = 0;
      failure ??= new Error('answer aborted');
    },
  };
  return sink;
}
