/** What bounds one request; defaults for what descriptors leave out. */
export interface WorkerLimits {
  /** Requests in flight across all services. */
  readonly concurrency: number;
  /** In flight per service when its descriptor says nothing. */
  readonly serviceConcurrency: number;
  /** A tool's time when neither tool nor service sets `timeout-ms`. */
  readonly timeoutMs: number;
  /** Larger request payloads are refused with a payload-too-large error. */
  readonly maxPayloadBytes: number;
  /** A tool's whole observation may not exceed this (the broker's message size, base64 on WebSocket). */
  readonly maxObservationBytes: number;
  /** After this many deliveries a retriable failure is answered instead of nacked again. */
  readonly maxRedeliveries: number;
  /** Delay before a nacked request comes back. */
  readonly nackDelayMs: number;
  /** How long stop() lets in-flight requests finish before aborting them. */
  readonly shutdownGraceMs: number;
  /**
   * Requests of a non-persistent topic taken off the broker and waiting for a slot, per
   * service. The broker drops what a consumer has no room for, so the worker holds a burst
   * itself, up to this many; past it (or past `backlogBytes`) a request is answered
   * `unavailable` at once.
   */
  readonly backlogMessages: number;
  /**
   * The receiver queue of a non-persistent request topic's subscription: how much of a burst
   * the broker can hand this worker before it drops the rest. On pulsar-ws each 1000 is one
   * more consumer on the subscription.
   */
  readonly nonPersistentPrefetch: number;
  /** The same bound in request bytes. */
  readonly backlogBytes: number;
  /**
   * Delivered messages this worker has answered, remembered per service so that a
   * redelivered copy (the broker redelivers a whole batch when one of its messages is
   * nacked) is acked without running its tool again.
   */
  readonly answeredMemory: number;
}

export const DEFAULT_LIMITS: WorkerLimits = {
  concurrency: 64,
  serviceConcurrency: 16,
  timeoutMs: 120_000,
  maxPayloadBytes: 1024 * 1024,
  maxObservationBytes: 512 * 1024,
  maxRedeliveries: 5,
  nackDelayMs: 1000,
  shutdownGraceMs: 10_000,
  backlogMessages: 10_000,
  nonPersistentPrefetch: 4000,
  backlogBytes: 64 * 1024 * 1024,
  answeredMemory: 10_000,
};

/** The message property an agent sets to ask for a streamed answer. */
export const STREAM_PROPERTY = 'toolwire-stream';
/**
 * On every message of a streamed answer: its place in the answer, from 0. A non-persistent
 * response topic may drop a message under load; a gap in the numbers is how an agent tells a
 * shortened answer from a whole one.
 */
export const SEQ_PROPERTY = 'toolwire-seq';
/** The message property naming a tool outright (used by our gateway and CLI). */
export const TOOL_PROPERTY = 'toolwire-tool';
/**
 * On a message of a namespace's cancel topic (cancelTopic): the id of a request whose agent
 * no longer waits. Every worker reads that topic; the one running the request aborts it.
 */
export const CANCEL_PROPERTY = 'toolwire-cancel';
/** Set on a dead-lettered request, saying why it could not be answered. */
export const DEAD_LETTER_REASON_PROPERTY = 'toolwire-dead-letter-reason';
