import { readFileSync } from 'node:fs';
import { procStatCpuTicks } from './resource-sample.js';

/** The machine's CPU time so far, in clock ticks, from /proc/stat's first line (Linux). */
export interface CpuTicks {
  readonly total: number;
  readonly idle: number;
  /** Time the hypervisor gave this machine's vCPUs to someone else. */
  readonly steal: number;
  /** This process's own CPU time (in a run, its agents'), where it was read. */
  readonly own?: number;
}

/** What the whole machine did between two readings, as shares of its CPU time. */
export interface MachineShare {
  /** Busy (neither idle nor stolen), in percent of all CPU time. */
  readonly busyPct: number;
  /** Stolen by the hypervisor, in percent: a round that ran slow for the host's reasons shows here. */
  readonly stealPct: number;
  /** This process's part of the busy time, in percent of all CPU time: in a run, its agents'. */
  readonly ownPct?: number;
}

/**
 * The first line of /proc/stat read as ticks, with this process's own from its
 * /proc/self/stat line when given; undefined where there is no machine line.
 */
export function parseCpuTicks(stat: string, selfStat?: string): CpuTicks | undefined {
  const line = stat.split('\n', 1)[0] ?? '';
  if (!line.startsWith('cpu ')) return undefined;
  // user nice system idle iowait irq softirq steal [guest guest_nice: already counted in user]
  const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 8 || f.some((n) => !Number.isFinite(n))) return undefined;
  const ticks = { total: f.reduce((a, b) => a + b, 0), idle: f[3]! + f[4]!, steal: f[7]! };
  const own = selfStat === undefined ? NaN : procStatCpuTicks(selfStat);
  return Number.isFinite(own) ? { ...ticks, own } : ticks;
}

export function readCpuTicks(): CpuTicks | undefined {
  try {
    return parseCpuTicks(readFileSync('/proc/stat', 'utf8'), readSelfStat());
  } catch {
    return undefined;
  }
}

/** This process's stat line; without it the machine's shares are still read. */
function readSelfStat(): string | undefined {
  try {
    return readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
}

export function machineShare(from: CpuTicks | undefined, to: CpuTicks | undefined): MachineShare | undefined {
  if (!from || !to || to.total <= from.total) return undefined;
  const total = to.total - from.total;
  const pct = (n: number): number => Math.round((1000 * n) / total) / 10;
  const share = { busyPct: pct(total - (to.idle - from.idle) - (to.steal - from.steal)), stealPct: pct(to.steal - from.steal) };
  return from.own !== undefined && to.own !== undefined ? { ...share, ownPct: pct(to.own - from.own) } : share;
}
