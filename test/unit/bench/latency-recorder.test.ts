import { describe, expect, it } from 'vitest';
import { LatencyRecorder } from '../../../bench/latency-recorder.js';

describe('LatencyRecorder', () => {
  it('reports percentiles of what it recorded, to three significant digits', () => {
    const r = new LatencyRecorder();
    for (let ms = 1; ms <= 1000; ms++) r.recordMs(ms);
    const s = r.summary();
    expect(s.count).toBe(1000);
    expect(s.p50Ms).toBeCloseTo(500, -1);
    expect(s.p90Ms).toBeCloseTo(900, -1);
    expect(s.p99Ms).toBeCloseTo(990, -1);
    expect(s.p999Ms).toBeCloseTo(999, -1);
    expect(s.maxMs).toBeCloseTo(1000, -1);
    expect(s.meanMs).toBeCloseTo(500.5, 0);
    r.destroy();
  });

  it('keeps sub-millisecond latencies (recorded in microseconds)', () => {
    const r = new LatencyRecorder();
    r.recordMs(0.25);
    r.recordMs(0.25);
    expect(r.summary().p50Ms).toBeCloseTo(0.25, 3);
    r.destroy();
  });

  it('summarises an empty run as zeros rather than failing', () => {
    const r = new LatencyRecorder();
    expect(r.summary()).toEqual({ count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0, meanMs: 0 });
    r.destroy();
  });
});
