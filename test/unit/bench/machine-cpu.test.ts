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

  it("gives this process's share of all CPU time beside them when its own stat line was read", () => {
    // A command name with spaces and a bracket; utime 300 and stime 100 ticks, then 500 and 200.
    const self = (utime: number, stime: number) => `4242 (node ma) in) S 1 4242 4242 0 -1 4194304 100 0 0 0 ${utime} ${stime} 0 0 20 0 11 0 5 1 1`;
    const from = parseCpuTicks('cpu  1000 0 200 5000 100 0 50 10 0 0\n', self(300, 100));
    const to = parseCpuTicks('cpu  1550 0 300 5200 100 0 60 150 0 0\n', self(500, 200));
    expect(from).toEqual({ total: 6360, idle: 5100, steal: 10, own: 400 });
    // 300 of the 1,000 ticks were this process's.
    expect(machineShare(from, to)).toEqual({ busyPct: 66, stealPct: 14, ownPct: 30 });
    expect(machineShare(parseCpuTicks('cpu  1000 0 200 5000 100 0 50 10 0 0\n'), to)).toEqual({ busyPct: 66, stealPct: 14 });
  });

  it('gives nothing for a missing or unreadable reading', () => {
    expect(parseCpuTicks('intr 1 2 3')).toBeUndefined();
    expect(machineShare(undefined, parseCpuTicks('cpu  1 0 0 1 0 0 0 0'))).toBeUndefined();
  });
});
