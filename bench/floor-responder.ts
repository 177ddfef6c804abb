import type { Logger } from 'pino';
import { encodeChunk, encodeError } from '../src/envelope/response.js';
import type { IncomingMessage, Producer, Subscription, Transport } from '../src/transport/transport.js';
import { STREAM_PROPERTY } from '../src/envelope/properties.js';
import { isPersistentTopic } from '../src/transport/topic-name.js';
import { defaultNonPersistentPrefetch } from '../src/worker/limits.js';

export interface FloorOptions {
  readonly transport: Transport;
  readonly requestTopic: string;
  readonly responseTopic: string;
  readonly subscription: string;
  /** Requests answered at once, as the worker's concurrency. */
  readonly concurrency: number;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

export interface FloorResponder {
  readonly answered: () => number;
  stop(): Promise<void>;
}

/**
 * The floor: the least a correct echo service on this transport must do per request —
 * take the message, parse the envelope and its arguments, publish the answer with the
 * request's id, ack. No descriptors, validation, plugins, timeouts or logging per request.
 * What toolwire reaches is judged against this, on the same Transport and broker.
 */
export async function startFloorResponder(o: FloorOptions): Promise<FloorResponder> {
  const subscription = await o.transport.subscribe(
    {
      topic: o.requestTopic,
      subscription: o.subscription,
      type: 'Shared',
      // As the worker: on a non-persistent topic the broker drops what finds no room, and a
      // floor that loses requests is no floor (it lost 12-20 a round with 128 on pulsar-ws).
      receiverQueueSize: isPersistentTopic(o.requestTopic) ? Math.min(1000, o.concurrency * 2) : defaultNonPersistentPrefetch(o.transport.kind),
      nackRedeliveryDelayMs: 1000,
    },
    o.signal,
  );
  const producer = await o.transport.producer(o.responseTopic, o.signal);
  let answered = 0;
  const loop = consume(subscription, producer, o, () => answered++);
  return {
    answered: () => answered,
    async stop() {
      await subscription.stop();
      await loop;
      await subscription.close();
    },
  };
}

async function consume(sub: Subscription, producer: Producer, o: FloorOptions, onAnswered: () => void): Promise<void> {
  let inFlight = 0;
  let freed: (() => void) | undefined;
  const tasks = new Set<Promise<void>>();
  for await (const msg of sub) {
    inFlight++;
    const t = answer(msg, producer)
      .then(onAnswered, async (err: unknown) => {
        o.log.warn({ err }, 'floor could not answer; nacked');
        await msg.nack();
      })
      .finally(() => {
        inFlight--;
        tasks.delete(t);
        freed?.();
      });
    tasks.add(t);
    while (inFlight >= o.concurrency) {
      await new Promise<void>((resolve) => (freed = resolve));
      freed = undefined;
    }
  }
  await Promise.all(tasks);
}

async function answer(msg: IncomingMessage, producer: Producer): Promise<void> {
  const id = msg.properties['id'] ?? 'unknown';
  const properties = { id };
  let text: string;
  let chunks = 0;
  try {
    const env = JSON.parse(msg.data.toString('utf8')) as { arguments?: unknown };
    const args = (typeof env.arguments === 'string' ? JSON.parse(env.arguments) : (env.arguments ?? {})) as Record<string, unknown>;
    text = typeof args['text'] === 'string' ? args['text'] : JSON.stringify(args);
    if (typeof args['chunks'] === 'number') chunks = Math.max(1, Math.min(10_000, Math.trunc(args['chunks'])));
  } catch (err) {
    await producer.send({ data: encodeError('invalid-request', (err as Error).message), properties });
    await msg.ack();
    return;
  }
  const stream = msg.properties[STREAM_PROPERTY] === 'true';
  if (!stream || chunks === 0) {
    await producer.send({ data: encodeChunk(chunks === 0 ? text : text.repeat(chunks), true), properties });
  } else {
    // One message per chunk, pipelined: the plain way to stream on this transport.
    const sends: Promise<void>[] = [];
    for (let i = 0; i < chunks; i++) sends.push(producer.send({ data: encodeChunk(text, false), properties }));
    sends.push(producer.send({ data: encodeChunk('', true), properties }));
    await Promise.all(sends);
  }
  await msg.ack();
}
