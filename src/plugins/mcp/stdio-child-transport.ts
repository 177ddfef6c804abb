import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { childUser, commandDenial } from '../access-denial.js';

export interface StdioChildOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The child's whole environment: nothing is added to it. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** The user and group the child runs as (the worker needs the right to switch); undefined: the worker's. */
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
  /** Each piece of the server's stderr, as text. */
  readonly onStderr?: ((text: string) => void) | undefined;
}

/** How long close() waits for the server to exit once its stdin ends, and again after SIGTERM. */
const EXIT_GRACE_MS = 2_000;

/** How long endedEarly() waits for a server that may be exiting to be seen gone. */
const END_WAIT_MS = 1_000;

/** A line of stderr that says a file could not be reached (Node's, a shell's, a loader's). */
const FILE_TROUBLE = /EACCES|EPERM|Permission denied|Cannot find (?:module|package)|No such file/;

/** How the child process ended: its code or signal, or the error that kept it from starting. */
interface ChildEnd {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly spawnError?: Error;
}

/**
 * An MCP server as a child process, spoken to over its stdin and stdout (newline-delimited
 * JSON-RPC, the SDK's own framing). The SDK's StdioClientTransport adds SHELL, TERM, USER
 * and LOGNAME to any environment it is given and cannot switch user; a server here gets
 * exactly `env`, and runs as `uid`/`gid` when the operator sets them, so it cannot read the
 * worker's environment through /proc. libuv drops the supplementary groups when it switches.
 */
export class StdioChildTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly buffer = new ReadBuffer();
  private ended: Promise<ChildEnd> | undefined;
  /** The server wrote a message; close() signalled it; its first stderr line about a file it could not reach. */
  private heard = false;
  private signalled = false;
  private fileTrouble: string | undefined;

  constructor(private readonly options: StdioChildOptions) {}

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error('the MCP server process is already started'));
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, [...this.options.args], {
        env: { ...this.options.env },
        cwd: this.options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        ...(this.options.uid !== undefined ? { uid: this.options.uid } : {}),
        ...(this.options.gid !== undefined ? { gid: this.options.gid } : {}),
      });
      this.child = child;
      let spawnError: Error | undefined;
      this.ended = new Promise((settle) => child.once('close', (code, signal) => settle({ code, signal, ...(spawnError ? { spawnError } : {}) })));
      child.once('spawn', () => resolve());
      child.on('error', (err) => {
        spawnError ??= err;
        reject(err);
        this.onerror?.(err);
      });
      child.once('close', () => {
        if (this.child === child) this.child = undefined;
        this.onclose?.();
      });
      child.stdin.on('error', (err) => this.onerror?.(err));
      child.stdout.on('error', (err) => this.onerror?.(err));
      child.stdout.on('data', (chunk: Buffer) => this.received(chunk));
      child.stderr.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        this.fileTrouble ??= text
          .split('\n')
          .find((line) => FILE_TROUBLE.test(line))
          ?.trim()
          .slice(0, 300);
        this.options.onStderr?.(text);
      });
    });
  }

  /**
   * For a connection that failed: why the server ended before it wrote a message, or undefined
   * when it wrote one, is still running or was stopped by close(). Its exit code or signal (or
   * the spawn error), the first stderr line that says a file could not be reached, and, when it
   * runs as another user, the file of its command (the program, or a script given as an
   * argument) or a directory above it that this user may not read or execute: the usual cause
   * when the worker's own user can run the command and the switched one cannot.
   */
  async endedEarly(): Promise<string | undefined> {
    const ended = this.ended;
    if (!ended || this.heard) return undefined;
    const end = await Promise.race([ended, delay(END_WAIT_MS, undefined, { ref: false })]);
    if (!end || this.signalled) return undefined;
    const o = this.options;
    const how = end.spawnError
      ? 'the MCP server could not be started'
      : `the MCP server exited ${end.signal ? `on ${end.signal}` : `with code ${String(end.code)}`} before it answered`;
    const user = childUser(o.uid, o.gid);
    const denied = user && (await commandDenial(o.command, o.args, { cwd: o.cwd, path: o.env['PATH'] }, user));
    return [how, denied, this.fileTrouble && `its stderr: ${this.fileTrouble}`].filter(Boolean).join('; ');
  }

  private received(chunk: Buffer): void {
    this.heard = true;
    try {
      this.buffer.append(chunk);
    } catch (err) {
      // Past the buffer's bound (a line of 10 MiB without its end): the server is not speaking MCP.
      this.onerror?.(err as Error);
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (err) {
        // One line that is not a JSON-RPC message (it is consumed); the next may be.
        this.onerror?.(err as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new Error('the MCP server process is not running'));
    return new Promise((resolve, reject) => {
      if (stdin.write(serializeMessage(message))) return resolve();
      // A child that dies (or a stdin that fails) never drains: settle the send then.
      const settle = (err?: Error): void => {
        stdin.off('drain', onDrain);
        stdin.off('error', onError);
        stdin.off('close', onClose);
        if (err) reject(err);
        else resolve();
      };
      const onDrain = (): void => settle();
      const onError = (err: Error): void => settle(new Error(`the MCP server's stdin failed: ${err.message}`, { cause: err }));
      const onClose = (): void => settle(new Error('the MCP server process ended before it read the message'));
      stdin.once('drain', onDrain);
      stdin.once('error', onError);
      stdin.once('close', onClose);
    });
  }

  /** Ends the server: its stdin first, then SIGTERM, then SIGKILL, each after a grace. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child) {
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
      const running = () => child.exitCode === null && child.signalCode === null;
      const exitOrGrace = () => Promise.race([exited, delay(EXIT_GRACE_MS, undefined, { ref: false })]);
      child.stdin.end();
      if (running()) await exitOrGrace();
      if (running()) {
        this.signalled = true;
        child.kill('SIGTERM');
        await exitOrGrace();
      }
      if (running()) child.kill('SIGKILL');
    }
    this.buffer.clear();
  }
}
