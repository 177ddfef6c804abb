import { spawn, type ChildProcess } from 'node:child_process';

export interface RunProcess {
  readonly child: ChildProcess;
  /** The HTTP surface's base URL, from the process's own serving line. */
  readonly base: string;
  /** Everything it wrote on stderr (its JSON log) so far. */
  readonly stderr: () => string;
}

/**
 * `toolwire run` as a real process (the built CLI) on the embedded transport and the given
 * config directory, resolved once its HTTP surface serves; rejected if it exits first.
 */
export function startRun(configDir: string, options: { readonly args?: readonly string[]; readonly env?: NodeJS.ProcessEnv } = {}): Promise<RunProcess> {
  const child = spawn(
    process.execPath,
    ['bin/toolwire.js', 'run', ...(options.args ?? []), '--config-dir', configDir, '--http-port', '0', '--log-format', 'json'],
    {
      env: { ...process.env, PULSAR_URL: '', PULSAR_ADMIN_URL: '', TOOLWIRE_TRANSPORT: 'memory', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"http":"(http:\/\/[^"]+)"/.exec(err);
      if (m) resolve({ child, base: m[1]!, stderr: () => err });
    });
    child.once('exit', (code) => reject(new Error(`toolwire run exited (${code}) before serving:\n${err}`)));
  });
}
