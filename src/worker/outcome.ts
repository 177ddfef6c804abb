/** How one delivery ended. */
export const Outcome = {
  Answered: 'answered',
  Failed: 'failed',
  Nacked: 'nacked',
  DeadLettered: 'dead-lettered',
  /** A redelivered copy of a request this worker already answered: acked, not run again. */
  Duplicate: 'duplicate',
} as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];
