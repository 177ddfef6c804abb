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
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"http":"(http:\/\/[^"]+)"/.exec(err);
      if (m) resolve({ child, base: m[1]!, stderr: () => err });
    });
    child.once('exit', (code) => reject(new Error(`toolwire run exited (${code}) before serving:\n${err}`)));
  });
}

/** A command to its end: its exit code and its stdout and stderr together; killed, and rejected, past `timeoutMs`. */
export function runCommand(
  cmd: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 180_000,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((done, fail) => {
    const c = spawn(cmd, [...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', npm_config_update_notifier: 'false', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      c.kill('SIGKILL');
      fail(new Error(`${cmd} ${args.join(' ')} took over ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    c.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

/** Polls `cond` every 200 ms until it holds; past `timeoutMs`, throws with the end of `log()`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, log: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}; the log ends:\n${log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Ends a process started with `detached: true` and everything in its group (`npm start` and
 * the worker under it): SIGTERM, then SIGKILL to whatever of the group is left after `graceMs`.
 * Resolves once the leader has exited and the group is empty (or, past the grace, was killed).
 */
export async function stopGroup(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (s: NodeJS.Signals | 0): boolean => {
    try {
      process.kill(-pid, s);
      return true;
    } catch {
      return false; // the group is gone
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (signal(0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  signal('SIGKILL');
  await exited;
}

/** `npm start` of a generated project, in its own process group (npm, its shell and the worker stop together). */
export interface ProjectWorker {
  readonly child: ChildProcess;
  /** The gateway's base URL, from the worker's serving line. */
  readonly base: string;
  /** Everything it printed so far. */
  readonly log: () => string;
}

/** Start `npm start` in `project` with an ephemeral HTTP port and JSON logs; resolves once it serves. */
export async function startProjectWorker(project: string, env: NodeJS.ProcessEnv): Promise<ProjectWorker> {
  const child = spawn('npm', ['start', '--', '--http-port', '0', '--log-format', 'json'], {
    cwd: project,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const serving = /"http":"(http:\/\/[^"]+)"/;
  try {
    await until(
      'the worker serving',
      () => serving.test(log),
      () => log,
    );
  } catch (err) {
    await stopGroup(child);
    throw err;
  }
  return { child, base: serving.exec(log)![1]!, log: () => log };
}
