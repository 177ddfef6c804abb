import { resolve } from 'node:path';
import { parse, UsageError } from '../src/cli/args.js';
import type { CommandIo } from '../src/cli/command.js';
import { REPO_ROOT } from './child-process.js';

const HELP = `Usage: npm run bench -- watch-reload [options]

'toolwire run --watch' as a real process on the embedded transport: one typed-tool module of a
project (with its own typescript) saved N times, each save timed until a gateway call answers
with the new code; then a save with a type error, timed until it is refused. Prints the
median and p90 reload, the log lines and service reloads a save makes, and the RSS after the
first and the last save.

  -n, --saves N        saves (default 50)
      --checkout DIR   the toolwire checkout to run, built (default this one); a worktree of
                       an older commit measures the "before"
      --deadline S     one save not served within S seconds fails the run (default 60)
`;

export async function watchReloadCommand(io: CommandIo): Promise<number> {
  const { values } = parse(io.argv, { saves: { type: 'string', short: 'n' }, checkout: { type: 'string' }, deadline: { type: 'string' } });
  if (values.help) {
    io.stdout.write(HELP);
    return 0;
  }
  const saves = Number(values.saves ?? 50);
  const deadlineS = Number(values.deadline ?? 60);
  if (!Number.isInteger(saves) || saves < 1) throw new UsageError('--saves must be a whole number >= 1');
  if (!(deadlineS > 0)) throw new UsageError('--deadline must be a number of seconds > 0');
  const { runWatchReload, formatWatchReload } = await import('./watch-reload.js');
  const result = await runWatchReload({ checkout: resolve(values.checkout ?? REPO_ROOT), saves, deadlineMs: deadlineS * 1000, signal: io.signal });
  io.stdout.write(formatWatchReload(result));
  io.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}
