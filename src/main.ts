/**
 * The composition root: the only place that reads process state, installs signal handlers
 * or exits.
 */
import { main } from './cli/main.js';

const controller = new AbortController();
let signals = 0;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    signals++;
    if (signals > 1) process.exit(130);
    controller.abort();
  });
}

const code = await main({
  argv: process.argv.slice(2),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
});
process.exitCode = code;
// Anything still holding the loop (a socket in a bad state) must not keep a finished command alive.
setTimeout(() => process.exit(code), 2000).unref();
