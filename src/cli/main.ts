import { benchCommand } from './commands/bench.js';
import { callCommand } from './commands/call.js';
import { configCommand } from './commands/config.js';
import { difyCommand } from './commands/dify-import.js';
import { mcpCommand } from './commands/mcp.js';
import { pulsarCommand } from './commands/pulsar-bootstrap.js';
import { runCommand } from './commands/run.js';
import { validateCommand } from './commands/validate.js';
import { UsageError } from './args.js';
import type { Command, CommandIo } from './command.js';

/** Commands with sub-commands of their own are grouped under one name. */
const COMMANDS: readonly Command[] = [runCommand, validateCommand, callCommand, configCommand, pulsarCommand, difyCommand, mcpCommand, benchCommand];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `Usage: toolwire <command> [options]

toolwire answers AI agents' tool requests over Apache Pulsar (TrustGraph's tool-service
wire format), with tools from in-process modules, Dify plugins, and more.

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

'toolwire <command> --help' shows a command's options.
`;
}

/** Run the CLI; returns the exit code. Only here and in commands does anything print. */
export async function main(io: CommandIo): Promise<number> {
  const [name, ...rest] = io.argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  try {
    return await command.run({ ...io, argv: rest });
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`toolwire ${name}: ${err.message}\n`);
      return 2;
    }
    io.stderr.write(`toolwire ${name}: ${(err as Error).message}\n`);
    return 1;
  }
}
