import { execFile } from 'node:child_process';
import { availableParallelism, cpus, freemem, loadavg, platform, release, totalmem } from 'node:os';
import { adminOf, type BrokerEndpoints } from './transport-for.js';

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly freeMemoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly pulsar: string;
  readonly python: string | undefined;
  readonly trustgraphBase: string | undefined;
  /** 1-minute load average when the run started: other work on the machine shows here. */
  readonly loadAverage: number;
  /** LD_PRELOAD of the run (an allocator such as jemalloc), which every process of it inherits. */
  readonly preload?: string | undefined;
}

function run(cmd: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 20_000 }, (err, stdout) => resolve(err ? undefined : stdout.trim()));
  });
}

export async function machineInfo(broker: BrokerEndpoints | undefined, python: string | undefined): Promise<MachineInfo> {
  const py = python
    ? await run(python, ['-c', 'import sys, importlib.metadata as m; print("%d.%d.%d" % sys.version_info[:3], m.version("trustgraph-base"))'])
    : undefined;
  const [pyVersion, tgVersion] = py ? py.split(' ') : [undefined, undefined];
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()}`,
    node: process.version,
    pulsar: broker
      ? await adminOf(broker)
          .brokerVersion()
          .catch(() => 'unknown')
      : 'n/a (memory transport)',
    python: pyVersion,
    trustgraphBase: tgVersion,
    loadAverage: loadavg()[0] ?? 0,
    preload: process.env['LD_PRELOAD'] || undefined,
  };
}
