/** A worker's life: idle -> running -> draining -> stopped; failed when start() did not complete. */
export const WorkerState = {
  Idle: 'idle',
  Running: 'running',
  Draining: 'draining',
  Stopped: 'stopped',
  Failed: 'failed',
} as const;
export type WorkerState = (typeof WorkerState)[keyof typeof WorkerState];

/** What a worker has done so far, and holds now. */
export interface WorkerStats {
  state: WorkerState;
  inFlight: number;
  received: number;
  answered: number;
  failed: number;
  nacked: number;
  deadLettered: number;
  /** Redelivered copies of requests already answered, acked without running again. */
  duplicates: number;
  /** Requests of a non-persistent topic answered `unavailable` because the backlog was full. */
  shed: number;
  /** Requests of non-persistent topics taken off the broker and waiting for a slot. */
  queued: number;
}
