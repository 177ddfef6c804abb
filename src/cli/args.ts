import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<T extends Options> = { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : T[K]['multiple'] extends true ? string[] : string } & {
  help?: boolean;
};

/** parseArgs with errors that point at --help. */
export function parse<T extends Options>(argv: readonly string[], options: T, allowPositionals = true): { values: Values<T>; positionals: string[] } {
  try {
    const r = parseArgs({ args: [...argv], options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals, strict: true });
    return { values: r.values as Values<T>, positionals: r.positionals };
  } catch (err) {
    throw new UsageError(`${(err as Error).message} (see --help)`);
  }
}

export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stdin as AsyncIterable<Buffer | string>) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError(`${what} must be a JSON object`);
  return v as Record<string, unknown>;
}
