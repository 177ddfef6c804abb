/**
 * The benchmark's and the drills' entry point (`npm run bench`, `npm run drills`): development
 * tooling beside the product, compiled to build/bench/ by `npm run build:bench`. It needs a
 * checkout (scripts/, test/interop/py) and the built product in dist/ (the worker it measures).
 */
import { UsageError } from '../src/cli/args.js';
import { runAsProcess } from '../src/cli/process-main.js';
import { benchCommand } from './bench-command.js';

await runAsProcess(async (io) => {
  try {
    return await benchCommand.run(io);
  } catch (err) {
    io.stderr.write(`bench: ${(err as Error).message}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
});
