import type { CommandIo } from './command.js';

/**
 * Run `command` as this process: the one place that reads process state, installs signal
 * handlers (the first SIGINT/SIGTERM aborts io.signal, a second exits at once) and sets the
 * exit code. Shared by the CLI (src/main.ts) and the bench's entry point.
 */
export async function runAsProcess(command: (io: CommandIo) => Promise<number>): Promise<void> {
  const controller = new AbortController();
  let signals = 0;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      signals++;
      if (signals > 1) process.exit(130);
      controller.abort();
    });
  }
  const code = await command({
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
}
