import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, UsageError } from '../src/cli/args.js';
import type { CommandIo } from '../src/cli/command.js';
import { REPO_ROOT } from './child-process.js';
import type { FleetBuild } from './fleet-bench.js';

export const FLEET_HELP = `Usage: npm run bench -- fleet [--services LIST] [--changes N] [--baseline DIR] [--cpu-prof DIR] [--out DIR]

What a fleet costs as it grows: for each size, 'toolwire run' as its own process on the
memory transport and a config directory of generated services (10 tools each, builtin
echo): ready after start (to /readyz 200), a one-tool change served after (the descriptor
written, until a call of that tool through the gateway answers with it; median of N, each in
another service), 'toolwire validate' on the same directory, and the worker's RSS. The sizes
side by side in one run, each build's growth from the smallest to the largest.

  --services LIST   fleet sizes in services (default 100,1000)
  --changes N       one-tool changes per fleet (default 3)
  --baseline DIR    also measure another checkout (dist/ built), e.g. a git worktree of the
                    commit before a change, labelled 'baseline', alternating with this one
  --cpu-prof DIR    write a V8 CPU profile of each worker there (read them with
                    'npm run bench -- profile-summary')
  --out DIR         results directory (default bench/results)
`;

function checkout(dir: string, label: string): FleetBuild {
  for (const f of ['bin/toolwire.js', 'dist/cli/main.js']) {
    if (!existsSync(join(dir, f))) throw new UsageError(`${dir}: no ${f} there (a toolwire checkout, built with npm run build)`);
  }
  return { label, dir };
}

export async function fleetCommand(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, {
    services: { type: 'string' },
    changes: { type: 'string' },
    baseline: { type: 'string' },
    'cpu-prof': { type: 'string' },
    out: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(FLEET_HELP);
    return 0;
  }
  const sizes = (values.services ?? '100,1000').split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new UsageError('--services is a list of whole numbers of services, e.g. 100,1000');
  const changes = Number(values.changes ?? '3');
  if (!Number.isInteger(changes) || changes < 1) throw new UsageError('--changes must be a whole number >= 1');
  const builds = [checkout(REPO_ROOT, 'toolwire')];
  if (values.baseline !== undefined) builds.push(checkout(resolve(values.baseline), 'baseline'));
  const { runFleetBench, fleetTable, writeFleetReport } = await import('./fleet-bench.js');
  const figures = await runFleetBench({
    sizes,
    builds,
    changes,
    ...(values['cpu-prof'] ? { cpuProfDir: resolve(values['cpu-prof']) } : {}),
    signal: io.signal,
    say: (line) => io.stderr.write(`${line}\n`),
  });
  const files = await writeFleetReport(values.out ?? 'bench/results', figures);
  io.stdout.write(`\n${fleetTable(figures)}\n${files.markdown}\n${files.json}\n`);
  return 0;
}
