import { describe, expect, it } from 'vitest';
import { TimeoutError } from '../../../src/errors.js';
import { CallAbort } from '../../../src/worker/call-abort.js';

describe('CallAbort', () => {
  it('aborts the signal and rejects `aborted` with the same reason, once', async () => {
    const call = new CallAbort();
    const first = new Error('first');
    call.abort(first);
    call.abort(new Error('second'));
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe(first);
    await expect(call.aborted).rejects.toBe(first);
  });

  it('aborts a signal a plugin took before the abort, and says why', () => {
    const call = new CallAbort();
    const taken = call.signal;
    expect(taken.aborted).toBe(false);
    expect(call.reason).toBeUndefined();
    const why = new TimeoutError('too slow');
    call.abort(why);
    expect(taken.aborted).toBe(true);
    expect(taken.reason).toBe(why);
    expect(call.reason).toBe(why);
    expect(call.signal).toBe(taken);
  });
});
