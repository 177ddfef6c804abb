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
   * more consumer on the subscription. Default: defaultNonPersistentPrefetch().
   */
  readonly nonPersistentPrefetch?: number;
  /** The same bound in request bytes. */
  readonly backlogBytes: number;
  /**
   * Delivered messages this worker has answered, remembered per service so that a
   * redelivered copy (the broker redelivers a whole batch when one of its messages is
   * nacked) is acked without running its tool again.
   */
  readonly answeredMemory: number;
  /**
   * Calls of one service that timed out (or were cancelled) while their plugin, ignoring its
   * signal, still runs. At this many the service takes no more requests until some end: a
   * hung backend must not pile up work without bound. 0 turns the limit off.
   */
  readonly maxAbandoned: number;
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
  backlogBytes: 64 * 1024 * 1024,
  answeredMemory: 10_000,
  maxAbandoned: 64,
};

/**
 * A non-persistent request topic's prefetch when none is set. The native client's receiver
 * queue is all the room a burst finds at the worker, so it is large
 * (docs/benchmarks-rationale.md). On pulsar-ws the WebSocket service's consumers
 * keep taking from the broker while the worker grants them room as messages arrive, and each 1,000 of prefetch
 * is one more consumer (one more socket, one more share of a mixed fleet's traffic).
 */
export function defaultNonPersistentPrefetch(transportKind: string): number {
  return transportKind === 'pulsar' ? 10_000 : 4_000;
}
