import type { Logger } from 'pino';
import { TransportError } from '../errors.js';
import type { NativeMessageId } from './pulsar-native-client.js';

/**
 * A broker drops a non-persistent publish that finds more than
 * `maxConcurrentNonPersistentMessagePerConnection` (1,000 by default) of its connection's
 * publishes in flight, and confirms it all the same, with ledger and entry -1 where a kept one
 * gets 0, 0 (`ServerCnx`). Both transports look for that receipt and send the message again.
 */

/**
 * Pauses between sends of a publish the broker dropped. There is no count of attempts: a drop
 * means the connection is busy for now, and the send's own timeout (sendTimeoutMs) is what a
 * caller set as the time it may take, so the publish is sent again until that has passed
 * (pulsar-ws counts it from the send, as its sweeper does; the native client from the first
 * drop, so that a kept send reads no clock).
 */
export const DROP_RETRY = { initialDelayMs: 5, maxDelayMs: 500 } as const;

/** pulsar-client prints a message id as `(ledger,entry,partition,batch)`. */
export function isDroppedNativeReceipt(id: NativeMessageId): boolean {
  return String(id).startsWith('(-1,-1,');
}

/**
 * The WebSocket API's receipt carries the id as base64 of its MessageIdData. Its first field is
 * the ledger (tag 0x08, a uint64 varint): -1 is nine 0xff bytes and 0x01, and 14 base64
 * characters cover the tag and those nine bytes. No real ledger reaches 2^63.
 */
const WS_DROPPED_PREFIX = 'CP///////////w';

export function isDroppedWsReceipt(messageId: unknown): boolean {
  return typeof messageId === 'string' && messageId.startsWith(WS_DROPPED_PREFIX);
}

/** The error of a publish dropped every time it was sent within the send's timeout. */
export function droppedTooOften(transport: string, topic: string, attempts: number, sendTimeoutMs: number): TransportError {
  return new TransportError(
    `${transport}: the broker dropped the publish to ${topic} ${attempts} times within the send timeout of ${sendTimeoutMs} ms (too many non-persistent publishes in flight on its connection)`,
    { retriable: true },
  );
}

/** Counts publishes the broker dropped and that are sent again; says so at most once a second. */
export class DroppedPublishes {
  private count = 0;
  private loggedAt = 0;

  readonly record = (topic: string, attempt: number): void => {
    this.count++;
    const now = Date.now();
    if (now - this.loggedAt < 1_000) return;
    this.loggedAt = now;
    this.log.warn(
      { topic, attempt, droppedSoFar: this.count },
      'the broker dropped a non-persistent publish (more in flight on the connection than its maxConcurrentNonPersistentMessagePerConnection); sending it again',
    );
  };

  constructor(private readonly log: Logger) {}
}
