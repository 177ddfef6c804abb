import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ToolwireError, ErrorCode } from '../src/errors.js';

/**
 * The repository root: the nearest folder up from this file holding package.json. This file
 * runs both as bench/child-process.ts (under vitest) and compiled as build/bench/child-process.js.
 */
export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));
/** The CLI launcher; it runs the compiled product in dist/ (so benchmarks and drills need a build). */
export const TOOLWIRE_BIN = join(REPO_ROOT, 'bin', 'toolwire.js');
/** The compiled bench's own entry point (`npm run build:bench`), for the floor's process. */
export const BENCH_MAIN = join(REPO_ROOT, 'build', 'bench', 'main.js');
/** The compiled probe that Node targets preload. */
export const PROBE_MODULE_URL = pathToFileURL(join(REPO_ROOT, 'build', 'bench', 'process-probe.js')).href;

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export interface ChildSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Open an IPC channel (Node children: the resource probe reports through it). */
  readonly ipc: boolean;
  readonly label: string;
  readonly cwd?: string;
}

/**
 * How long after its exit a child's output may still arrive: the pipes can deliver what it
 * wrote last (a native crash's message) after the exit event, and a grandchild that holds them
 * open must not hold up the report for ever.
 */
const OUTPUT_GRACE_MS = 1_000;

/** A child process the bench or a drill started, with its stderr tail kept for errors. */
export class ManagedChild {
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  /** As `exited`, once its output is read to the end (or OUTPUT_GRACE_MS passed): for reports of how it ended. */
  readonly ended: Promise<number | null>;
  private tail = '';
  private lineListeners: ((line: string) => void)[] = [];
  private partial = '';

  constructor(readonly spec: ChildSpec) {
    this.process = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd ?? REPO_ROOT,
      env: spec.env,
      stdio: spec.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    });
    const onData = (d: Buffer) => {
      const text = d.toString('utf8');
      this.tail = (this.tail + text).slice(-8000);
      if (this.lineListeners.length === 0) return;
      const lines = (this.partial + text).split('\n');
      this.partial = lines.pop() ?? '';
      for (const l of lines) for (const f of this.lineListeners) f(l);
    };
    this.process.stdout?.on('data', onData);
    this.process.stderr?.on('data', onData);
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null)));
      this.process.once('error', () => resolve(-2));
    });
    const read = Promise.all(
      [this.process.stdout, this.process.stderr].flatMap((stream) => (stream ? [new Promise((resolve) => stream.once('close', resolve))] : [])),
    );
    this.ended = this.exited.then(async (code) => {
      await Promise.race([read, delay(OUTPUT_GRACE_MS, undefined, { ref: false })]);
      return code;
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** How it ended, for messages: the exit code, or the signal (a native crash shows as SIGSEGV or SIGABRT). */
  get exitText(): string {
    const { exitCode, signalCode } = this.process;
    return signalCode ? `killed by ${signalCode}` : `exit code ${String(exitCode)}`;
  }

  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  /** The last few KB of its output, for error messages. */
  output(): string {
    return this.tail;
  }

  /** Call `listener` with every output line from now on (stdout and stderr). */
  onLine(listener: (line: string) => void): void {
    this.lineListeners.push(listener);
  }

  /** Resolve on the first output line matching `pattern`; reject if the child exits first. */
  waitForLine(pattern: RegExp, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      const done = (fn: () => void) => {
        clearTimeout(timer);
        this.lineListeners = this.lineListeners.filter((f) => f !== listener);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const listener = (line: string) => {
        if (pattern.test(line)) done(() => resolve(line));
      };
      const onAbort = () => done(() => reject(new ToolwireError(ErrorCode.Aborted, `aborted waiting for ${this.spec.label}`)));
      const timer = setTimeout(
        () =>
          done(() =>
            reject(new ToolwireError(ErrorCode.Timeout, `${this.spec.label} did not print ${pattern} within ${timeoutMs} ms:\n${this.tail.slice(-2000)}`)),
          ),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.lineListeners.push(listener);
      if (this.tail.split('\n').some((l) => pattern.test(l))) done(() => resolve(''));
      void this.ended.then(() =>
        done(() =>
          reject(
            new ToolwireError(ErrorCode.Unavailable, `${this.spec.label} exited (${this.exitText}) before printing ${pattern}:\n${this.tail.slice(-2000)}`),
          ),
        ),
      );
    });
  }

  /** SIGKILL, no grace: what the kill drill does to the worker. */
  async kill(): Promise<void> {
    if (this.running) this.process.kill('SIGKILL');
    await this.exited;
  }

  /** `signal` (SIGTERM unless said), then SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.running) {
      this.process.kill(signal);
      const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
      timer.unref();
      const code = await this.exited;
      clearTimeout(timer);
      return code;
    }
    return this.exited;
  }
}
