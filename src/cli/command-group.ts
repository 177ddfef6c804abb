import { pickCommand, type Command, type CommandIo } from './command.js';

/** `toolwire <name> <sub> ...`: a command whose sub-commands do the work. */
export function commandGroup(name: string, summary: string, subcommands: readonly Command[]): Command {
  const width = Math.max(...subcommands.map((sub) => sub.name.length));
  const help = `Usage: toolwire ${name} <command> [options]

Commands:
${subcommands.map((sub) => `  ${sub.name.padEnd(width)}  ${sub.summary}`).join('\n')}

'toolwire ${name} <command> --help' shows a command's options.
`;
  return {
    name,
    summary,
    help,
    async run(io: CommandIo): Promise<number> {
      const picked = pickCommand(io, subcommands, help, `toolwire ${name}: `);
      if ('exitCode' in picked) return picked.exitCode;
      return picked.command.run({ ...io, argv: picked.argv });
    },
  };
}
