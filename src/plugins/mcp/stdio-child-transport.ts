import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

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
      child.once('spawn', () => resolve());
      child.on('error', (err) => {
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
      child.stderr.on('data', (chunk: Buffer) => this.options.onStderr?.(chunk.toString('utf8')));
    });
  }

  private received(chunk: Buffer): void {
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
        child.kill('SIGTERM');
        await exitOrGrace();
      }
      if (running()) child.kill('SIGKILL');
    }
    this.buffer.clear();
  }
}
