import type { Writable } from 'node:stream';
import { parse, type Flags, type ParsedArgs } from './args.js';

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

/** A command as written: its flags, and what it does with a parsed command line that does not ask for help. */
export interface CommandSpec<T extends Flags> {
  readonly name: string;
  readonly summary: string;
  readonly help: string;
  readonly flags: T;
  /** Whether it takes operands besides its flags (default: it does). */
  readonly positionals?: boolean;
  run(io: CommandIo, args: ParsedArgs<T>): Promise<number>;
}

/**
 * A command whose command line the framework parses: a mistake is a usage error, and `-h` or
 * `--help` anywhere prints the help and exits 0, so no command handles help itself.
 */
export function defineCommand<T extends Flags>(spec: CommandSpec<T>): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    help: spec.help,
    async run(io) {
      const args = parse(io.argv, spec.flags, spec.positionals ?? true);
      if (args.values.help) {
        io.stdout.write(spec.help);
        return 0;
      }
      return spec.run(io, args);
    },
  };
}

/**
 * The command `toolwire [group] <word> ...` names, with the arguments after the word; or, when
 * no command is named, asked for help (`--help`, `-h`, `help`) or unknown, the usage printed
 * and the exit code (0 for help asked for, else 2).
 */
export function pickCommand<T extends { readonly name: string }>(
  io: CommandIo,
  table: readonly T[],
  usage: string,
  unknownPrefix: string,
): { readonly command: T; readonly argv: readonly string[] } | { readonly exitCode: number } {
  const [word, ...argv] = io.argv;
  if (!word || word === '--help' || word === '-h' || word === 'help') {
    io.stdout.write(usage);
    return { exitCode: word ? 0 : 2 };
  }
  const command = table.find((entry) => entry.name === word);
  if (!command) {
    io.stderr.write(`${unknownPrefix}unknown command "${word}"\n\n${usage}`);
    return { exitCode: 2 };
  }
  return { command, argv };
}
