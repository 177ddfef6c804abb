import { describe, expect, it } from 'vitest';
import { AbortedError, TimeoutError } from '../../../src/errors.js';
import { sleep } from '../../../src/async/sleep.js';

describe('sleep', () => {
  it('rejects with AbortedError when its signal aborts', async () => {
    const ac = new AbortController();
    const waiting = sleep(60_000, ac.signal);
    ac.abort();
    await expect(waiting).rejects.toBeInstanceOf(AbortedError);
  });

  it('rejects at once for an already aborted signal', async () => {
    await expect(sleep(60_000, AbortSignal.abort())).rejects.toBeInstanceOf(AbortedError);
  });

  it("rejects with the signal's reason when the worker typed it (a call's deadline)", async () => {
    const ac = new AbortController();
    const deadline = new TimeoutError('the tool did not answer within 10 ms');
    const waiting = sleep(60_000, ac.signal);
    ac.abort(deadline);
    await expect(waiting).rejects.toBe(deadline);
  });

  it('resolves after the time when nothing aborts it', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    await expect(sleep(1, new AbortController().signal)).resolves.toBeUndefined();
  });
});
