import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

/** A command line parseArgs refuses (an unknown flag, a flag without its value). */
export class CommandLineError extends UsageError {
  /** parseArgs' own words, without the pointer to --help. */
  readonly reason: string;
  constructor(reason: string, options?: ErrorOptions) {
    super(`${reason} (see --help)`, options);
    this.reason = reason;
  }
}

/** A command's flags, as parseArgs takes them. */
export type Flags = NonNullable<ParseArgsConfig['options']>;

/** The values of `Flags` on a command line, typed by each flag's declaration. */
export type FlagValues<T extends Flags> = {
  [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : T[K]['multiple'] extends true ? string[] : string;
};

/** A parsed command line. `help` is set by `-h` or `--help`, which every command takes. */
export interface ParsedArgs<T extends Flags> {
  readonly values: FlagValues<T> & { help?: boolean };
  readonly positionals: string[];
}

/** parseArgs with errors that point at --help. */
export function parse<T extends Flags>(argv: readonly string[], options: T, allowPositionals = true): ParsedArgs<T> {
  try {
    const parsed = parseArgs({ args: [...argv], options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (err) {
    throw new CommandLineError((err as Error).message, { cause: err });
  }
}

export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin as AsyncIterable<Buffer | string>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`${what} must be a JSON object`);
  return parsed as Record<string, unknown>;
}
