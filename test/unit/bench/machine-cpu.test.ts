import { describe, expect, it } from 'vitest';
import { machineShare, parseCpuTicks } from '../../../bench/machine-cpu.js';

describe('machine CPU shares', () => {
  it("reads /proc/stat's first line and gives busy and stolen time as shares of the interval", () => {
    const from = parseCpuTicks('cpu  1000 0 200 5000 100 0 50 10 0 0\ncpu0 1 2 3\n');
    const to = parseCpuTicks('cpu  1550 0 300 5200 100 0 60 150 0 0\ncpu0 1 2 3\n');
    // 1,000 ticks passed: 200 idle, 140 stolen, 660 busy.
    expect(from).toEqual({ total: 6360, idle: 5100, steal: 10 });
    expect(machineShare(from, to)).toEqual({ busyPct: 66, stealPct: 14 });
  });

  it('gives nothing for a missing or unreadable reading', () => {
    expect(parseCpuTicks('intr 1 2 3')).toBeUndefined();
    expect(machineShare(undefined, parseCpuTicks('cpu  1 0 0 1 0 0 0 0'))).toBeUndefined();
  });
});
