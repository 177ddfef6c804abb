import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError } from '../../errors.js';
import { createLogger } from '../../logging.js';
import { startTracing } from '../../tracing/start-tracing.js';
import { fleetMcpServer, InFlight, type FleetDeps } from '../../mcp-server/fleet-mcp-server.js';
import { McpHttpServer } from '../../mcp-server/mcp-http.js';
import { mcpToolDescriptors } from '../../plugins/mcp/mcp-descriptors.js';
import type { McpServiceOptions } from '../../plugins/mcp/mcp-options.js';
import { STDIO_BASICS } from '../../plugins/mcp/mcp-kind.js';
import { connectMcp, listAllTools } from '../../plugins/mcp/mcp-session.js';
import { loadSecrets, type Secrets } from '../../secrets.js';
import { readSettings, settingSecrets, type Settings } from '../../settings.js';
import { commandGroup } from '../command-group.js';
import { defineCommand, type Command } from '../command.js';
import { openTransport } from '../../assembly/open-transport.js';
import { openFleetView, type FleetView } from '../../assembly/fleet-view.js';
import { httpToken } from '../../assembly/http-token.js';
import { settingOptions, settingsFromFlags } from '../setting-flags.js';
import { UsageError } from '../args.js';
import { DESCRIPTOR_FLAGS, importedService, listFlag, writeDescriptors } from '../write-descriptors.js';

const IMPORT_HELP = `Usage: toolwire mcp import --service ID (--command CMD [--arg A]... | --url URL) [options]

Connects to an MCP server, lists its tools (every page) and writes a tool-service
descriptor for it and a tool descriptor per tool: name, description, and arguments from the
tool's inputSchema (types, required, enums, descriptions; nested objects and arrays keep
their JSON Schema). Ready for 'toolwire config import DIR'.

Server:
      --command CMD        a stdio server: the command ...
      --arg A              ... and its arguments (repeat)
      --env NAME=VALUE     its environment (repeat); VALUE may be env:NAME or file:key
      --cwd DIR            its working directory (a worker resolves a relative one from
                           its config directory)
      --url URL            a streamable HTTP server
      --token-ref REF      its bearer token, as a secret reference (env:NAME or file:key)
Descriptors:
      --service ID         the tool-service id (required)
      --request-queue Q    default non-persistent://tg/request/<id>
      --response-queue Q   default non-persistent://tg/response/<id>
      --prefix P           tool names are P<mcp tool name> (default none)
      --include LIST       only these MCP tools (comma-separated)
      --exclude LIST       all but these
      --out DIR            write DIR/tool-service/<id>.json and DIR/tool/<name>.json
                           (default: print them as one JSON document)
`;

const mcpImportCommand: Command = defineCommand({
  name: 'import',
  summary: "tool descriptors from an MCP server's tools/list",
  help: IMPORT_HELP,
  flags: {
    command: { type: 'string' },
    arg: { type: 'string', multiple: true },
    env: { type: 'string', multiple: true },
    cwd: { type: 'string' },
    url: { type: 'string' },
    'token-ref': { type: 'string' },
    ...DESCRIPTOR_FLAGS,
  },
  positionals: false,
  async run(io, { values }) {
    const id = values.service;
    if (!id) throw new UsageError('--service is required');
    if ((values.command === undefined) === (values.url === undefined))
      throw new UsageError('give exactly one of --command (stdio) and --url (streamable HTTP)');
    const env: Record<string, string> = {};
    for (const pair of values.env ?? []) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new UsageError(`--env ${pair}: expected NAME=VALUE`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const plugin: McpServiceOptions = values.command
      ? { transport: 'stdio', command: values.command, args: values.arg ?? [], env, ...(values.cwd ? { cwd: values.cwd } : {}) }
      : { transport: 'http', url: values.url!, headers: {}, ...(values['token-ref'] ? { token: values['token-ref'] } : {}) };
    const settings = readSettings(io.env);
    const log = createLogger({ level: 'warn', pretty: false });
    const basics = Object.fromEntries(STDIO_BASICS.map((name) => [name, io.env[name]]));
    let client;
    try {
      // Relative paths are the operator's, from here; a worker resolves them from its config directory.
      client = await connectMcp(
        plugin,
        { serviceId: id, configDir: process.cwd(), secrets: loadSecrets(io.env, settings.secretsFile), basics, log },
        AbortSignal.any([io.signal, AbortSignal.timeout(30_000)]),
      );
    } catch (err) {
      if (err instanceof ConfigError) throw new UsageError(err.problems.join('; '));
      throw err;
    }
    let tools;
    try {
      tools = await listAllTools(client, io.signal);
    } finally {
      await client.close();
    }
    const include = listFlag(values.include);
    const exclude = listFlag(values.exclude);
    const picked = tools.filter((tool) => (!include || include.has(tool.name)) && !exclude?.has(tool.name));
    const service = importedService(id, values, 'tool', { kind: 'mcp', ...plugin });
    const descriptors = mcpToolDescriptors(picked, { service: id, prefix: values.prefix ?? '' });
    await writeDescriptors(io, values.out, service, descriptors, tools.length);
    return 0;
  },
});

const SERVE_HELP = `Usage: toolwire mcp serve [--http PORT] [options]

Serves the fleet's tools as one MCP server: tools/list is the catalog (followed live, with
tools/list_changed), tools/call publishes a request the way an agent does, so whichever
worker takes it answers. Stream chunks become progress notifications (when the client asks
for progress); error answers become isError results; a cancelled call is aborted.

On the embedded transport (no broker named) it runs the worker in this process too.

  (default)             MCP over stdio (logs go to stderr)
      --http PORT       MCP over streamable HTTP on /mcp instead
      --host H          default 127.0.0.1; anything else needs TOOLWIRE_HTTP_TOKEN, the
                        bearer token every client must send (a secret reference)
                        Over HTTP: a request naming a foreign Host or sent by a web page
                        of another origin is refused (TOOLWIRE_HTTP_ALLOWED_HOSTS and
                        TOOLWIRE_HTTP_ALLOWED_ORIGINS name more); at most
                        TOOLWIRE_MCP_MAX_SESSIONS sessions (1000), and
                        TOOLWIRE_MCP_MAX_SESSIONS_PER_CLIENT (100) of one address, each
                        closed after TOOLWIRE_MCP_SESSION_IDLE_MS (15 min) with nothing
                        open, or sooner to make room for a new one
      --max-in-flight N calls at once, over all clients (default 64)
      --timeout-ms N    a call's time (default TOOLWIRE_TIMEOUT_MS)
  -d, --config-dir DIR, --config-source S, -w, --workspace W, -T, --transport KIND,
      --pulsar-url URL, --admin-url URL    as for 'toolwire run'
`;

/** A flag that must be a positive whole number; `def` when it is absent. */
function positive(flagValue: string | undefined, name: string, fallback: number): number {
  if (flagValue === undefined) return fallback;
  const parsed = Number(flagValue);
  if (!Number.isInteger(parsed) || parsed <= 0) throw new UsageError(`${name} must be a positive integer`);
  return parsed;
}

/** The HTTP token, a reference that does not resolve being the operator's usage error. */
function tokenOf(settings: Settings, secrets: Secrets): string | undefined {
  try {
    return httpToken(settings, secrets);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.problems.join('; '));
    throw err;
  }
}

/** MCP over stdio; returns how to stop. */
async function serveStdio(deps: FleetDeps): Promise<() => Promise<void>> {
  const { server, dispose } = fleetMcpServer(deps, new InFlight());
  await server.connect(new StdioServerTransport());
  deps.log.info({ tools: deps.catalog().tools.size }, 'serving MCP on stdio');
  return async () => {
    dispose();
    await server.close();
  };
}

/** MCP over streamable HTTP; returns how to stop. A setting it refuses closes the fleet view and is a usage error. */
async function serveHttp(
  deps: FleetDeps,
  fleet: FleetView,
  settings: Settings,
  where: { host: string; port: number },
  token: string | undefined,
): Promise<() => Promise<void>> {
  let http: McpHttpServer;
  try {
    http = new McpHttpServer(deps, {
      ...where,
      token,
      browser: { allowedHosts: settings.httpAllowedHosts, allowedOrigins: settings.httpAllowedOrigins },
      maxSessions: settings.mcpMaxSessions,
      maxSessionsPerClient: settings.mcpMaxSessionsPerClient,
      idleMs: settings.mcpSessionIdleMs,
    });
  } catch (err) {
    await fleet.close();
    if (err instanceof ConfigError) throw new UsageError(err.problems.join('; '));
    throw err;
  }
  const at = await http.start();
  deps.log.info(
    { url: `http://${at.host}:${at.port}/mcp`, auth: token ? 'bearer token' : 'none (loopback only)', tools: deps.catalog().tools.size },
    'serving MCP on streamable HTTP',
  );
  return () => http.close();
}

const mcpServeCommand: Command = defineCommand({
  name: 'serve',
  summary: "the fleet's tools as one MCP server (stdio or streamable HTTP)",
  help: SERVE_HELP,
  flags: {
    http: { type: 'string' },
    host: { type: 'string' },
    'max-in-flight': { type: 'string' },
    'timeout-ms': { type: 'string' },
    ...settingOptions('config-dir', 'config-source', 'workspace', 'transport', 'pulsar-url', 'admin-url'),
  },
  positionals: false,
  async run(io, { values }) {
    const { env, settings } = settingsFromFlags(io.env, values);
    const maxInFlight = positive(values['max-in-flight'], '--max-in-flight', 64);
    const callTimeoutMs = positive(values['timeout-ms'], '--timeout-ms', settings.limits.timeoutMs);
    const secrets = loadSecrets(env, settings.secretsFile);
    const token = tokenOf(settings, secrets);
    // Logs on stderr always: in stdio mode stdout is the protocol.
    const log = createLogger({
      level: settings.logLevel,
      pretty: false,
      secrets: () => [...secrets.values(), ...settingSecrets(settings), ...(token ? [token] : [])],
    });
    const tracing = await startTracing(env, log);
    // 0: a free port, named in the log line that says where it serves.
    const port = values.http === undefined ? undefined : values.http === '0' ? 0 : positive(values.http, '--http', 0);
    const host = values.host ?? '127.0.0.1';
    let f: FleetView;
    try {
      f = await openFleetView({ settings, transport: await openTransport(settings, log, io.signal), secrets, log, signal: io.signal });
    } catch (err) {
      if (err instanceof ConfigError) {
        io.stderr.write(`cannot start: ${err.problems.join('\n  ')}\n`);
        return 1;
      }
      throw err;
    }
    const deps: FleetDeps = {
      catalog: () => f.catalog(),
      onCatalogChange: (listener) => f.onCatalogChange(listener),
      client: f.client,
      log,
      maxInFlight,
      callTimeoutMs,
    };
    const stopServing = port === undefined ? await serveStdio(deps) : await serveHttp(deps, f, settings, { host, port }, token);
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await stopServing();
    await f.close();
    await tracing?.shutdown();
    return 0;
  },
});

export const mcpCommand: Command = commandGroup('mcp', "MCP both ways: import an MCP server's tools, serve the fleet as an MCP server", [
  mcpImportCommand,
  mcpServeCommand,
]);
