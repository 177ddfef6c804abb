import type { Writable } from 'node:stream';

/** What a command may touch: its argv, the streams, the environment, a signal for Ctrl-C. */
export interface CommandIo {
  readonly argv: readonly string[];
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
}

/** One `toolwire <name>` command. `run` returns the exit code. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  /** Full `--help` text. */
  readonly help: string;
  run(io: CommandIo): Promise<number>;
}
