import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { Logger } from 'pino';
import { TimeoutError, ToolFailedError } from '../../errors.js';
import { abortError } from '../../async/abort-error.js';
import { parsePluginJson } from '../dify-common/plugin-json.js';

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
export async function* runSlim(o: SlimRunOptions): AsyncGenerator<SlimOutput> {
  if (o.signal.aborted) throw abortError(o.signal);
  const child = spawn(o.path, [...o.args], {
    env: { ...o.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
    ...(o.uid !== undefined ? { uid: o.uid } : {}),
    ...(o.gid !== undefined ? { gid: o.gid } : {}),
  });

  let spawnError: Error | undefined;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (err) => {
      spawnError = err;
      resolve({ code: null, signal: null });
    });
    child.once('close', (code, signal) => resolve({ code, signal }));
  });

  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s: string) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += s.slice(0, MAX_STDERR_CHARS - stderr.length);
  });
  // A child that exits before reading its input: the exit code says what happened.
  child.stdin.on('error', () => undefined);
  child.stdin.end(o.stdin);

  let stoppedBy: 'abort' | 'timeout' | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const signalGroup = (sig: NodeJS.Signals): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  const stop = (): void => {
    if (child.exitCode !== null || child.signalCode !== null || killTimer) return;
    signalGroup('SIGTERM');
    killTimer = setTimeout(() => signalGroup('SIGKILL'), o.killGraceMs);
  };
  const onAbort = (): void => {
    stoppedBy ??= 'abort';
    stop();
  };
  o.signal.addEventListener('abort', onAbort, { once: true });
  const deadline = setTimeout(() => {
    stoppedBy ??= 'timeout';
    o.log.warn({ timeoutMs: o.timeoutMs }, 'slim did not finish in time; stopping it');
    stop();
  }, o.timeoutMs);

  try {
    const decoder = new StringDecoder('utf8');
    let buffer = '';
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      buffer += decoder.write(chunk);
      let nl: number;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line) yield { kind: 'line', value: parseLine(line) };
      }
      if (buffer.length > MAX_LINE_CHARS) throw new ToolFailedError(`tool invoke error: slim wrote a line longer than ${MAX_LINE_CHARS} characters`);
    }
    buffer += decoder.end();
    if (buffer.trim()) yield { kind: 'line', value: parseLine(buffer.trim()) };

    const exit = await closed;
    if (spawnError) {
      o.log.error({ err: spawnError, path: o.path }, 'cannot start the slim binary');
      throw new ToolFailedError('tool invoke error: the plugin runner could not be started');
    }
    if (stoppedBy === 'abort') throw abortError(o.signal);
    if (stoppedBy === 'timeout') {
      throw new TimeoutError(`tool invoke error: the plugin did not finish within ${duration(o.timeoutMs)}${o.timeoutHint ? `; ${o.timeoutHint}` : ''}`);
    }
    yield { kind: 'exit', code: exit.code, signal: exit.signal, stderr };
  } finally {
    clearTimeout(deadline);
    o.signal.removeEventListener('abort', onAbort);
    stop();
    await closed;
    clearTimeout(killTimer);
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
