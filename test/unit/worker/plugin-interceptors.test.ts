/**
 * The interceptors around each plugin call, each alone: the deadline, and the running calls
 * that a cancel and the hard stop reach. The handler composes them (running calls outermost);
 * the worker tests cover them in place (timeouts, cancels, shutdown).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AbortedError, TimeoutError } from '../../../src/errors.js';
import { CallAbort } from '../../../src/worker/call-abort.js';
import { deadlineInterceptor } from '../../../src/worker/deadline-interceptor.js';
import type { PluginRun } from '../../../src/worker/interceptor.js';
import { RunningCalls } from '../../../src/worker/running-calls.js';

const run = (over: { requestId?: string; timeoutMs?: number; invokedAt?: number } = {}): PluginRun =>
  ({
    invokedAt: over.invokedAt ?? performance.now(),
    requestId: over.requestId ?? 'r1',
    abort: new CallAbort(),
    call: { tool: { name: 'slow-tool' }, service: { id: 'svc' }, timeoutMs: over.timeoutMs ?? 1_000 },
  }) as unknown as PluginRun;

/** A `next` that settles only when told to, so the test decides when the plugin ends. */
function pending(): { next: () => Promise<void>; end: () => void; calls: () => number } {
  let calls = 0;
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  return { next: () => (calls++, done), end: () => end(), calls: () => calls };
}

describe('the deadline interceptor', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it.each([50, 300, 1_000])('aborts the run with a timeout at the call’s deadline (%i ms)', async (limit) => {
    const r = run({ timeoutMs: limit });
    const p = pending();
    void deadlineInterceptor(r, p.next);
    expect(p.calls()).toBe(1);
    vi.advanceTimersByTime(limit - 1);
    expect(r.abort.reason).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(r.abort.reason).toBeInstanceOf(TimeoutError);
    expect(r.abort.reason?.message).toBe(`tool slow-tool did not finish within ${limit} ms`);
  });

  it('counts the deadline from when the plugin was invoked, not from when its promise came back', async () => {
    // The plugin's synchronous part took 400 ms of a 1,000 ms deadline.
    const r = run({ timeoutMs: 1_000, invokedAt: performance.now() - 400 });
    const p = pending();
    void deadlineInterceptor(r, p.next);
    vi.advanceTimersByTime(598);
    expect(r.abort.reason).toBeUndefined();
    vi.advanceTimersByTime(2);
    expect(r.abort.reason).toBeInstanceOf(TimeoutError);
    expect(r.abort.reason?.message).toBe('tool slow-tool did not finish within 1000 ms');
  });

  it('leaves a run that ended in time alone', async () => {
    const r = run({ timeoutMs: 50 });
    const p = pending();
    const done = deadlineInterceptor(r, p.next);
    p.end();
    await done;
    vi.advanceTimersByTime(10_000);
    expect(r.abort.reason).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("passes the plugin's failure through and clears its timer", async () => {
    const r = run();
    await expect(deadlineInterceptor(r, () => Promise.reject(new Error('plugin broke')))).rejects.toThrow('plugin broke');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the running calls', () => {
  it('lets a cancel reach the call of its request only while it runs', async () => {
    const stop = new AbortController();
    const running = new RunningCalls(stop.signal);
    const [a, b] = [run({ requestId: 'a' }), run({ requestId: 'b' })];
    const [pa, pb] = [pending(), pending()];
    const da = running.interceptor(a, pa.next);
    const db = running.interceptor(b, pb.next);
    expect(running.cancel('nobody')).toBe(false);
    expect(running.cancel('a')).toBe(true);
    expect(a.abort.reason).toBeInstanceOf(AbortedError);
    expect(a.abort.reason?.message).toBe('the agent cancelled the call');
    expect(b.abort.reason).toBeUndefined();
    pa.end();
    pb.end();
    await Promise.all([da, db]);
    expect(running.cancel('b')).toBe(false);
  });

  it('aborts every running call at the hard stop, and admits none after it', async () => {
    const stop = new AbortController();
    const running = new RunningCalls(stop.signal);
    const [a, b] = [run({ requestId: 'a' }), run({ requestId: 'b' })];
    const [pa, pb] = [pending(), pending()];
    void running.interceptor(a, pa.next);
    void running.interceptor(b, pb.next);
    stop.abort();
    for (const r of [a, b]) expect(r.abort.reason?.message).toBe('the worker is shutting down');
    expect(() => running.admit()).toThrow('the worker is shutting down');
  });

  it('admits calls until the hard stop', () => {
    const stop = new AbortController();
    const running = new RunningCalls(stop.signal);
    expect(() => running.admit()).not.toThrow();
    stop.abort();
    expect(() => running.admit()).toThrow(AbortedError);
  });

  it('keeps both runs of one request id (a redelivery while the first still runs): a cancel and the hard stop reach both', async () => {
    for (const end of ['cancel', 'hard stop'] as const) {
      const stop = new AbortController();
      const running = new RunningCalls(stop.signal);
      const [first, second, other] = [run({ requestId: 'same' }), run({ requestId: 'same' }), run({ requestId: 'other' })];
      const [p1, p2, p3] = [pending(), pending(), pending()];
      const d1 = running.interceptor(first, p1.next);
      const d2 = running.interceptor(second, p2.next);
      void running.interceptor(other, p3.next);
      if (end === 'cancel') expect(running.cancel('same')).toBe(true);
      else stop.abort();
      expect(first.abort.reason, end).toBeInstanceOf(AbortedError);
      expect(second.abort.reason, end).toBeInstanceOf(AbortedError);
      expect(other.abort.reason !== undefined, end).toBe(end === 'hard stop');
      p1.end();
      p2.end();
      await Promise.all([d1, d2]);
    }
  });

  it('still reaches the later run of an id once the earlier one has ended, and forgets the id when both have', async () => {
    const running = new RunningCalls(new AbortController().signal);
    const [first, second] = [run({ requestId: 'same' }), run({ requestId: 'same' })];
    const [p1, p2] = [pending(), pending()];
    const d1 = running.interceptor(first, p1.next);
    const d2 = running.interceptor(second, p2.next);
    p1.end();
    await d1;
    expect(running.cancel('same')).toBe(true);
    expect(second.abort.reason?.message).toBe('the agent cancelled the call');
    p2.end();
    await d2;
    expect(running.cancel('same')).toBe(false);
  });

  it('lets go of the hard stop once disposed', () => {
    const stop = new AbortController();
    const running = new RunningCalls(stop.signal);
    const a = run();
    void running.interceptor(a, pending().next);
    running.dispose();
    stop.abort();
    expect(a.abort.reason).toBeUndefined();
  });
});
