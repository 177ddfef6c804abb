import { UsageError } from './args.js';
import { pickCommand, type Command, type CommandIo } from './command.js';

/**
 * Every command, loaded only when it runs: a command module pulls in what it needs (the
 * worker, plugins, the MCP SDK...), and loading them all made every CLI call, `toolwire
 * call` included, pay half a second before doing anything. Each summary is its command's own
 * (a test keeps them equal).
 */
export const COMMANDS: readonly { readonly name: string; readonly summary: string; load(): Promise<Command> }[] = [
  { name: 'run', summary: 'run the worker (embedded by default, or on Pulsar)', load: async () => (await import('./commands/run.js')).runCommand },
  { name: 'validate', summary: 'check every descriptor in a config directory', load: async () => (await import('./commands/validate.js')).validateCommand },
  { name: 'call', summary: 'call a tool as an agent does and print its observation', load: async () => (await import('./commands/call.js')).callCommand },
  {
    name: 'config',
    summary: 'put, get, list, delete or import descriptors (tg-put-config-item flags)',
    load: async () => (await import('./commands/config.js')).configCommand,
  },
  {
    name: 'pulsar',
    summary: "broker chores: create TrustGraph's tenant and namespaces (bootstrap)",
    load: async () => (await import('./commands/pulsar-bootstrap.js')).pulsarCommand,
  },
  { name: 'dify', summary: 'Dify plugin chores: build tool descriptors (import)', load: async () => (await import('./commands/dify-import.js')).difyCommand },
  {
    name: 'mcp',
    summary: "MCP both ways: import an MCP server's tools, serve the fleet as an MCP server",
    load: async () => (await import('./commands/mcp.js')).mcpCommand,
  },
  { name: 'init', summary: 'a new tool project: one typed tool, its descriptors, a test', load: async () => (await import('./commands/init.js')).initCommand },
  {
    name: 'module',
    summary: 'typed tools in TypeScript or JavaScript: write their descriptors (import)',
    load: async () => (await import('./commands/module-import.js')).moduleCommand,
  },
  { name: 'openapi', summary: 'HTTP APIs as tools: import an OpenAPI document', load: async () => (await import('./commands/openapi.js')).openApiCommand },
];

function usage(): string {
  const width = Math.max(...COMMANDS.map((entry) => entry.name.length));
  return `Usage: toolwire <command> [options]

toolwire answers AI agents' tool requests over Apache Pulsar (TrustGraph's tool-service
wire format), with tools from in-process modules, Dify plugins, MCP servers and HTTP APIs.

Commands:
${COMMANDS.map((entry) => `  ${entry.name.padEnd(width)}  ${entry.summary}`).join('\n')}

'toolwire <command> --help' shows a command's options.
`;
}

/** Run the CLI; returns the exit code. Only here and in commands does anything print. */
export async function main(io: CommandIo): Promise<number> {
  const picked = pickCommand(io, COMMANDS, usage(), '');
  if ('exitCode' in picked) return picked.exitCode;
  const { name } = picked.command;
  try {
    return await (await picked.command.load()).run({ ...io, argv: picked.argv });
  } catch (err) {
    io.stderr.write(`toolwire ${name}: ${(err as Error).message}\n`);
    return err instanceof UsageError ? 2 : 1;
  }
}
