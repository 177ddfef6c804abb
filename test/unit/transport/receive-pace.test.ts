import { describe, expect, it } from 'vitest';
import { BUSY_GAP_MS, BUSY_RUN, ReceivePace } from '../../../src/transport/receive-pace.js';

/** A pace on a clock the test moves. */
function paced(): { pace: ReceivePace; at: (ms: number) => void } {
  let now = 0;
  return { pace: new ReceivePace(() => now), at: (ms) => (now = ms) };
}

describe('ReceivePace', () => {
  it('keeps single receives while messages come further apart than the busy gap', () => {
    const { pace, at } = paced();
    for (let i = 0; i < 20; i++) {
      at(i * BUSY_GAP_MS * 1.5);
      expect(pace.next(1)).toBe(false);
    }
  });

  it(`turns to batches once ${BUSY_RUN} messages in a row came within the gap of the one before`, () => {
    const { pace, at } = paced();
    const answers: boolean[] = [];
    for (let i = 0; i < BUSY_RUN; i++) {
      at(100 + i * BUSY_GAP_MS * 0.5);
      answers.push(pace.next(1));
    }
    expect(answers).toEqual([...Array<boolean>(BUSY_RUN - 1).fill(false), true]);
  });

  it('starts the run again after a gap', () => {
    const { pace, at } = paced();
    at(0);
    pace.next(1);
    at(0.1);
    pace.next(1);
    at(10); // a pause: this message starts a new run
    const answers: boolean[] = [];
    for (let i = 0; i < BUSY_RUN; i++) {
      at(10 + i * 0.1);
      answers.push(pace.next(1));
    }
    expect(answers).toEqual([...Array<boolean>(BUSY_RUN - 1).fill(false), true]);
  });

  it('stays on batches while they bring two or more, and goes back to single receives after one that brings fewer', () => {
    const { pace, at } = paced();
    for (let i = 0; i < BUSY_RUN; i++) {
      at(i * 0.1);
      pace.next(1);
    }
    expect(pace.next(40)).toBe(true);
    expect(pace.next(2)).toBe(true);
    expect(pace.next(1)).toBe(false);
    // Back to single receives: a lone message later does not turn it to batches on its own.
    at(50);
    expect(pace.next(1)).toBe(false);
  });
});
