import type { BenchOptions } from '../bench-options.js';
import type { ScenarioResult } from '../bench-runner.js';
import type { MachineInfo } from '../machine-info.js';
import type { Ratios, TargetCheck } from './target-checks.js';

/** Everything one `npm run bench` run measured; the JSON file is this object. */
export interface BenchReport {
  readonly runId: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** The command line that reproduces it. */
  readonly command: string;
  readonly machine: MachineInfo;
  /** 1-minute load average when the run finished (the run itself loads the machine too: broker, worker, agents). */
  readonly loadAverageEnd: number;
  readonly options: Omit<BenchOptions, 'broker' | 'python'> & { readonly broker: string | undefined };
  readonly scenarios: readonly ScenarioResult[];
  readonly ratios: Ratios;
  readonly checks: readonly TargetCheck[];
}
