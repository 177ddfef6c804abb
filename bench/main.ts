/**
 * The benchmark's and the drills' entry point (`npm run bench`, `npm run drills`): development
 * tooling beside the product, compiled to build/bench/ by `npm run build:bench`. It needs a
 * checkout (scripts/, test/interop/py) and the built product in dist/ (the worker it measures).
 */
import { UsageError } from '../src/cli/args.js';
import { benchCommand } from './bench-command.js';

const controller = new AbortController();
let signals = 0;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    signals++;
    if (signals > 1) process.exit(130);
    controller.abort();
  });
}

let code: number;
try {
  code = await benchCommand.run({
    argv: process.argv.slice(2),
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: controller.signal,
  });
} catch (err) {
  process.stderr.write(`bench: ${(err as Error).message}\n`);
  code = err instanceof UsageError ? 2 : 1;
}
process.exitCode = code;
// A socket left in a bad state must not keep a finished run alive.
setTimeout(() => process.exit(code), 2000).unref();
