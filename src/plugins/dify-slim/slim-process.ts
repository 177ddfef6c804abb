import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Logger } from 'pino';
import { TimeoutError, ToolFailedError } from '../../errors.js';
import { abortError } from '../../async/abort-error.js';
import { parsePluginJson } from '../dify-common/plugin-json.js';
import { accessDenial, childUser } from '../access-denial.js';

/** One line of slim's stdout, parsed; or, last, how the process ended. */
export type SlimOutput =
  | { readonly kind: 'line'; readonly value: unknown }
  | { readonly kind: 'exit'; readonly code: number | null; readonly signal: NodeJS.Signals | null; readonly stderr: string };

export interface SlimRunOptions {
  readonly path: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly stdin: string;
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  readonly killGraceMs: number;
  readonly log: Logger;
  /** Said in the timeout error (why a run may never end). */
  readonly timeoutHint?: string;
  /** The child's working directory; default the worker's. */
  readonly cwd?: string;
  /** Run the child as this user and group (the worker must be allowed to: root, or CAP_SETUID). */
  readonly uid?: number;
  readonly gid?: number;
}

const MAX_LINE_CHARS = 16 * 1024 * 1024;
const MAX_STDERR_CHARS = 64 * 1024;

/**
 * Run the slim binary once and yield its JSON Lines as they come, then its exit. The child
 * gets its own process group, so stopping it (abort, timeout, or a consumer that stops
 * reading) also stops the plugin process it started: SIGTERM to the group, SIGKILL after
 * the grace period. The generator only finishes once the process is gone.
 */
export async function* runSlim(options: SlimRunOptions): AsyncGenerator<SlimOutput> {
  if (options.signal.aborted) throw abortError(options.signal);
  const child = spawnSlim(options);
  const ended = endOf(child);
  const stderr = collectStderr(child);
  // A child that exits before reading its input: the exit code says what happened.
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin);
  const stopper = new GroupStopper(child, options);
  try {
    for await (const value of jsonLines(child.stdout)) yield { kind: 'line', value };
    const exit = await ended;
    if (exit.spawnError) {
      // Run as DIFY_SLIM_UID/GID, the usual cause is a binary (or a directory above it) that user may not enter or execute.
      const user = childUser(options.uid, options.gid);
      const denied = user && (await accessDenial(options.path, user, 'execute'));
      options.log.error({ err: exit.spawnError, path: options.path, ...user, ...(denied ? { denied } : {}) }, 'cannot start the slim binary');
      throw new ToolFailedError('tool invoke error: the plugin runner could not be started');
    }
    if (stopper.stoppedBy === 'abort') throw abortError(options.signal);
    if (stopper.stoppedBy === 'timeout') {
      throw new TimeoutError(
        `tool invoke error: the plugin did not finish within ${duration(options.timeoutMs)}${options.timeoutHint ? `; ${options.timeoutHint}` : ''}`,
      );
    }
    yield { kind: 'exit', code: exit.code, signal: exit.signal, stderr: stderr() };
  } finally {
    stopper.stopNow();
    await ended;
    stopper.dispose();
  }
}

type SlimChild = ChildProcessByStdio<Writable, Readable, Readable>;

function spawnSlim(options: SlimRunOptions): SlimChild {
  return spawn(options.path, [...options.args], {
    env: { ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  });
}

/** How the child ended; one that could not start ends with the spawn error. */
function endOf(child: SlimChild): Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: Error }> {
  return new Promise((resolve) => {
    child.once('error', (err) => resolve({ code: null, signal: null, spawnError: err }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
}

/** The child's stderr so far, its first MAX_STDERR_CHARS. */
function collectStderr(child: SlimChild): () => string {
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += text.slice(0, MAX_STDERR_CHARS - stderr.length);
  });
  return () => stderr;
}

/** The child's stdout as JSON Lines, each parsed; a line longer than MAX_LINE_CHARS is a failure. */
async function* jsonLines(stdout: Readable): AsyncGenerator<unknown> {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  for await (const chunk of stdout as AsyncIterable<Buffer>) {
    buffer += decoder.write(chunk);
    let newline: number;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) yield parseLine(line);
    }
    if (buffer.length > MAX_LINE_CHARS) throw new ToolFailedError(`tool invoke error: slim wrote a line longer than ${MAX_LINE_CHARS} characters`);
  }
  buffer += decoder.end();
  if (buffer.trim()) yield parseLine(buffer.trim());
}

/**
 * Stops the child's process group when the run is aborted or passes its time: SIGTERM, then
 * SIGKILL after the grace period. `stoppedBy` says which came first.
 */
class GroupStopper {
  stoppedBy: 'abort' | 'timeout' | undefined;
  private killTimer: NodeJS.Timeout | undefined;
  private readonly deadline: NodeJS.Timeout;
  private readonly onAbort = (): void => {
    this.stoppedBy ??= 'abort';
    this.stop();
  };

  constructor(
    private readonly child: SlimChild,
    private readonly options: SlimRunOptions,
  ) {
    options.signal.addEventListener('abort', this.onAbort, { once: true });
    this.deadline = setTimeout(() => {
      this.stoppedBy ??= 'timeout';
      options.log.warn({ timeoutMs: options.timeoutMs }, 'slim did not finish in time; stopping it');
      this.stop();
    }, options.timeoutMs);
  }

  /** The run is over (or its reader left): no more deadline or abort, and a child still running is stopped. */
  stopNow(): void {
    clearTimeout(this.deadline);
    this.options.signal.removeEventListener('abort', this.onAbort);
    this.stop();
  }

  /** Once the child has ended: the SIGKILL is not needed. */
  dispose(): void {
    clearTimeout(this.killTimer);
  }

  private stop(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null || this.killTimer) return;
    this.signalGroup('SIGTERM');
    this.killTimer = setTimeout(() => this.signalGroup('SIGKILL'), this.options.killGraceMs);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // already gone
    }
  }
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function parseLine(line: string): unknown {
  try {
    return parsePluginJson(line);
  } catch {
    throw new ToolFailedError('tool invoke error: the plugin runner wrote a line that is not JSON');
  }
}
