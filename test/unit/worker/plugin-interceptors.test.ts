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

const run = (over: { requestId?: string; toolTimeout?: number; serviceTimeout?: number } = {}): PluginRun =>
  ({
    requestId: over.requestId ?? 'r1',
    abort: new CallAbort(),
    call: {
      tool: { name: 'slow-tool', ...(over.toolTimeout !== undefined ? { timeoutMs: over.toolTimeout } : {}) },
      service: { id: 'svc', ...(over.serviceTimeout !== undefined ? { timeoutMs: over.serviceTimeout } : {}) },
    },
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

  it.each([
    ['the tool', { toolTimeout: 50, serviceTimeout: 500 }, 50],
    ['the service', { serviceTimeout: 300 }, 300],
    ['the worker', {}, 1_000],
  ])("aborts the run with a timeout at %s's limit", async (_who, over, limit) => {
    const r = run(over);
    const p = pending();
    void deadlineInterceptor(1_000)(r, p.next);
    expect(p.calls()).toBe(1);
    vi.advanceTimersByTime(limit - 1);
    expect(r.abort.reason).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(r.abort.reason).toBeInstanceOf(TimeoutError);
    expect(r.abort.reason?.message).toBe(`tool slow-tool did not finish within ${limit} ms`);
  });

  it('leaves a run that ended in time alone', async () => {
    const r = run({ toolTimeout: 50 });
    const p = pending();
    const done = deadlineInterceptor(1_000)(r, p.next);
    p.end();
    await done;
    vi.advanceTimersByTime(10_000);
    expect(r.abort.reason).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("passes the plugin's failure through and clears its timer", async () => {
    const r = run();
    await expect(deadlineInterceptor(1_000)(r, () => Promise.reject(new Error('plugin broke')))).rejects.toThrow('plugin broke');
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

  it('aborts every running call at the hard stop, and refuses a run that starts after it', async () => {
    const stop = new AbortController();
    const running = new RunningCalls(stop.signal);
    const [a, b] = [run({ requestId: 'a' }), run({ requestId: 'b' })];
    const [pa, pb] = [pending(), pending()];
    void running.interceptor(a, pa.next);
    void running.interceptor(b, pb.next);
    stop.abort();
    for (const r of [a, b]) expect(r.abort.reason?.message).toBe('the worker is shutting down');
    const late = pending();
    await expect(running.interceptor(run({ requestId: 'c' }), late.next)).rejects.toThrow('the worker is shutting down');
    expect(late.calls()).toBe(0);
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
