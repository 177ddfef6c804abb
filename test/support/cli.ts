import { PassThrough, Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';

/** Run the CLI in-process with captured output. */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv = {}, stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(c: Buffer, _e, cb) {
        append(c.toString());
        cb();
      },
    });
  const input = new PassThrough();
  input.end(stdin);
  const code = await main({
    argv,
    stdin: input,
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    env: { LOG_LEVEL: 'silent', ...env },
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}
