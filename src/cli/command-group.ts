import type { Command, CommandIo } from './command.js';

/** `toolwire <name> <sub> ...`: a command whose sub-commands do the work. */
export function commandGroup(name: string, summary: string, subcommands: readonly Command[]): Command {
  const width = Math.max(...subcommands.map((c) => c.name.length));
  const help = `Usage: toolwire ${name} <command> [options]

Commands:
${subcommands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

'toolwire ${name} <command> --help' shows a command's options.
`;
  return {
    name,
    summary,
    help,
    async run(io: CommandIo): Promise<number> {
      const [sub, ...rest] = io.argv;
      if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
        io.stdout.write(help);
        return sub === undefined ? 2 : 0;
      }
      const command = subcommands.find((c) => c.name === sub);
      if (!command) {
        io.stderr.write(`toolwire ${name}: unknown command "${sub}"\n\n${help}`);
        return 2;
      }
      return command.run({ ...io, argv: rest });
    },
  };
}
