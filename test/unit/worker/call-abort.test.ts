import { describe, expect, it } from 'vitest';
import { TimeoutError } from '../../../src/errors.js';
import { CallAbort } from '../../../src/worker/call-abort.js';

describe('CallAbort', () => {
  it('aborts the signal and rejects a race begun after it with the same reason, once', async () => {
    const call = new CallAbort();
    const first = new Error('first');
    call.abort(first);
    call.abort(new Error('second'));
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe(first);
    await expect(call.race(new Promise<void>(() => undefined))).rejects.toBe(first);
  });

  it('ends a race with work that never settles as soon as the call is aborted', async () => {
    const call = new CallAbort();
    const racing = call.race(new Promise<void>(() => undefined));
    const why = new TimeoutError('too slow');
    call.abort(why);
    await expect(racing).rejects.toBe(why);
  });

  it('settles a race as its work does when nothing aborts it, and ignores an abort after that', async () => {
    const call = new CallAbort();
    await expect(call.race(Promise.resolve())).resolves.toBeUndefined();
    const failed = new Error('the plugin failed');
    const other = new CallAbort();
    await expect(other.race(Promise.reject(failed))).rejects.toBe(failed);
    call.abort(new Error('late'));
    expect(call.reason?.message).toBe('late');
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
