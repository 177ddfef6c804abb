import { describe, expect, it } from 'vitest';
import { Slots } from '../../../src/async/slots.js';

describe('Slots', () => {
  it('starts a caller before acquire returns while a slot is free', () => {
    const slots = new Slots(2);
    const started: number[] = [];
    slots.acquire(() => started.push(1));
    slots.acquire(() => started.push(2));
    expect(started).toEqual([1, 2]);
    expect(slots.active).toBe(2);
    expect(slots.pending).toBe(0);
  });

  it('holds callers past the limit and starts them in the order they came, one per release', () => {
    const slots = new Slots(1);
    const started: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) slots.acquire(() => started.push(name));
    expect(started).toEqual(['a']);
    expect(slots.pending).toBe(3);
    slots.release();
    expect(started).toEqual(['a', 'b']);
    slots.release();
    slots.release();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(slots.active).toBe(1);
    slots.release();
    expect(slots.active).toBe(0);
  });

  it('hands a released slot to the longest waiter, not to a caller that comes after it', () => {
    const slots = new Slots(1);
    const started: string[] = [];
    slots.acquire(() => started.push('first'));
    slots.acquire(() => started.push('waiter'));
    slots.release(); // the waiter takes the freed slot
    slots.acquire(() => started.push('newcomer'));
    expect(started).toEqual(['first', 'waiter']);
    expect(slots.pending).toBe(1);
  });

  it('refuses a release with no slot taken, and a bound that is not a positive integer', () => {
    expect(() => new Slots(1).release()).toThrow(/not taken/);
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new Slots(bad)).toThrow(RangeError);
    expect(new Slots(Number.POSITIVE_INFINITY).limit).toBe(Number.POSITIVE_INFINITY);
  });
});
