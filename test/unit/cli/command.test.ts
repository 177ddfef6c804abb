import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CommandLineError } from '../../../src/cli/args.js';
import { defineCommand, type Command, type CommandIo } from '../../../src/cli/command.js';
import { commandGroup } from '../../../src/cli/command-group.js';
import { COMMANDS } from '../../../src/cli/main.js';
import { runCli } from '../../support/cli.js';

/** Runs `command` with `argv`, its output captured. */
async function runCommand(command: Command, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        append(chunk.toString());
        done();
      },
    });
  const io: CommandIo = {
    argv,
    stdin: new PassThrough(),
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env: {},
    signal: new AbortController().signal,
  };
  const code = await command.run(io);
  return { code, stdout, stderr };
}

/** A command that says what it was given, and counts its runs. */
function echoCommand(name: string): Command & { runs: number } {
  const counter = { runs: 0 };
  const command = defineCommand({
    name,
    summary: `the ${name} command`,
    help: `Usage: toolwire ${name} [--loud] [WORD...]\n`,
    flags: { loud: { type: 'boolean', short: 'l' }, as: { type: 'string', short: 'a' } },
    async run(io, { values, positionals }) {
      counter.runs++;
      io.stdout.write(`${JSON.stringify({ loud: values.loud ?? false, as: values.as ?? null, words: positionals })}\n`);
      return 0;
    },
  });
  return Object.assign(counter, command);
}

describe('the command framework', () => {
  it('answers -h and --help anywhere on the command line with the help, exit 0, and does not run the command', async () => {
    const command = echoCommand('echo');
    for (const argv of [['--help'], ['-h'], ['word', '--help'], ['--loud', '-h', 'word'], ['-lh']]) {
      expect(await runCommand(command, argv)).toEqual({ code: 0, stdout: command.help, stderr: '' });
    }
    expect(command.runs).toBe(0);
  });

  it('gives the command its parsed flags and operands; -h as a value, or --help after --, is not a request for help', async () => {
    const command = echoCommand('echo');
    const result = await runCommand(command, ['-l', 'one', '--as=-h', '--', '--help']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ loud: true, as: '-h', words: ['one', '--help'] });
    expect(command.runs).toBe(1);
  });

  it('refuses a command line it cannot parse before it looks for --help', async () => {
    const command = echoCommand('echo');
    await expect(runCommand(command, ['--bogus', '--help'])).rejects.toThrow(CommandLineError);
    await expect(runCommand(command, ['--bogus'])).rejects.toThrow("Unknown option '--bogus'");
    const closed = defineCommand({ name: 'closed', summary: 's', help: 'h\n', flags: {}, positionals: false, run: async () => 0 });
    await expect(runCommand(closed, ['extra'])).rejects.toThrow(/does not take positional arguments \(see --help\)$/);
  });

  it("lists a group's commands for --help, -h and help (exit 0), and when none is named (exit 2)", async () => {
    const group = commandGroup('things', 'things to do', [echoCommand('echo'), echoCommand('say')]);
    const listing =
      "Usage: toolwire things <command> [options]\n\nCommands:\n  echo  the echo command\n  say   the say command\n\n'toolwire things <command> --help' shows a command's options.\n";
    expect(group.help).toBe(listing);
    for (const word of ['--help', '-h', 'help']) expect(await runCommand(group, [word])).toEqual({ code: 0, stdout: listing, stderr: '' });
    expect(await runCommand(group, [])).toEqual({ code: 2, stdout: listing, stderr: '' });
    expect(await runCommand(group, ['fly'])).toEqual({ code: 2, stdout: '', stderr: `toolwire things: unknown command "fly"\n\n${listing}` });
  });

  it("passes a group's sub-command the rest of the command line, help included", async () => {
    const echo = echoCommand('echo');
    const group = commandGroup('things', 'things to do', [echo]);
    expect(JSON.parse((await runCommand(group, ['echo', 'a', '-l'])).stdout)).toEqual({ loud: true, as: null, words: ['a'] });
    expect(await runCommand(group, ['echo', 'a', '--help'])).toEqual({ code: 0, stdout: echo.help, stderr: '' });
  });

  it('lists the commands for toolwire --help, -h and help (exit 0), and with no command (exit 2)', async () => {
    for (const word of ['--help', '-h', 'help']) {
      const result = await runCli([word]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: toolwire <command> \[options\]\n/);
      for (const entry of COMMANDS) expect(result.stdout).toContain(`  ${entry.name.padEnd(8)}  ${entry.summary}\n`);
    }
    const bare = await runCli([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe((await runCli(['--help'])).stdout);
    const unknown = await runCli(['fly']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(`unknown command "fly"\n\n${bare.stdout}`);
  });

  it("prints each command's own help for toolwire <command> --help, and each sub-command's for toolwire <group> <sub> --help", async () => {
    const groups: string[] = [];
    for (const entry of COMMANDS) {
      const command = await entry.load();
      for (const flag of ['--help', '-h']) expect(await runCli([entry.name, flag])).toEqual({ code: 0, stdout: command.help, stderr: '' });
      if (!command.help.startsWith(`Usage: toolwire ${entry.name} <command>`)) continue;
      groups.push(entry.name);
      const subcommands = [...command.help.matchAll(/^ {2}(\S+) {2,}/gm)].map((match) => match[1]!);
      expect(subcommands.length).toBeGreaterThan(0);
      for (const sub of subcommands) {
        const result = await runCli([entry.name, sub, '--help']);
        expect(result.code).toBe(0);
        expect(result.stdout.split('\n').slice(0, 2).join('\n')).toContain(`toolwire ${entry.name} ${sub}`);
        expect(result.stdout).toMatch(/\n$/);
      }
    }
    expect(groups).toEqual(['pulsar', 'dify', 'mcp', 'module', 'openapi']);
    // Loads every command's module graph, most of the program.
  }, 60_000);
});
