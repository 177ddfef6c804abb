import { encodeChunk } from '../envelope/response.js';
import { PayloadTooLargeError } from '../errors.js';
import type { Producer } from '../transport/transport.js';

/**
 * Where a tool's chunks go. Single mode keeps them and sends one message at the end (what
 * today's agents read); stream mode sends each as it comes, then a final empty message.
 * Both cap the observation's total size, so a runaway tool cannot exhaust memory.
 */
export interface ObservationSink {
  write(text: string): Promise<void>;
  /** Send the final message; resolves when the broker has every message of the answer. */
  end(): Promise<void>;
  /** True once anything reached the agent (a retry would then repeat chunks). */
  readonly started: boolean;
}

export function createSink(
  stream: boolean,
  producer: Producer,
  properties: Readonly<Record<string, string>>,
  maxBytes: number,
): ObservationSink {
  let bytes = 0;
  const count = (text: string) => {
    bytes += Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) {
      throw new PayloadTooLargeError(`the tool's observation exceeds ${maxBytes} bytes, the most this worker sends`);
    }
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
    };
  }
  // Sends are pipelined: a producer keeps order, and waiting for each would add a round trip per chunk.
  const pending: Promise<void>[] = [];
  let failure: unknown;
  const sink = {
    started: false,
    async write(text: string) {
      if (failure) throw failure;
      if (text === '') return;
      count(text);
      sink.started = true;
      const p = producer.send({ data: encodeChunk(text, false), properties });
      p.catch((err: unknown) => {
        failure ??= err;
      });
      pending.push(p);
      if (pending.length >= 256) await Promise.all(pending.splice(0));
    },
    async end() {
      pending.push(producer.send({ data: encodeChunk('', true), properties }));
      await Promise.all(pending);
    },
  };
  return sink;
}
