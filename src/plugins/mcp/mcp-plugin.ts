import type { Execution, Reach } from '../../policy/exec-policy.js';
import { ExecSetting } from '../../policy/exec-rules.js';
import { ConfigError, errorMessage } from '../../errors.js';
import { AddressGuard, AddressRefusedError } from '../../net/address-guard.js';
import { guardedFetch, type GuardedFetch } from '../../net/guarded-fetch.js';
import { AsyncQueue } from '../../async/async-queue.js';
import { blobSinkFor, type BlobSink } from '../blob-sink.js';
import type { Observation, Plugin, PluginContext, PluginFactory, ServiceWith, ToolCall, ToolWith } from '../plugin.js';
import { STDIO_BASICS } from './mcp-kind.js';
import { MCP_KIND, mcpSchemas, type McpServiceOptions, type McpToolOptions } from './mcp-options.js';
import { resultText } from './mcp-result.js';
import { connectMcp, listAllTools, McpSession, type McpSessionContext } from './mcp-session.js';
import { readStdioIdentity } from './stdio-identity.js';
import { stdioLaunch } from './stdio-launch.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';

type McpService = ServiceWith<McpServiceOptions>;

/** How long a guarded connection to an http server may take to open. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * An http server's connections go through the address guard when the operator bounds private
 * addresses for this config source (TOOLWIRE_ALLOW_PRIVATE; by default for TrustGraph's): the
 * descriptor's URL is the config writer's, and the worker may sit inside a private network.
 */
function guardedNet(service: McpService, ctx: PluginContext): GuardedFetch | undefined {
  const allowed = ctx.policy?.privateAllowance() ?? true;
  if (service.plugin.options.transport !== 'http' || allowed === true) return undefined;
  const guard = new AddressGuard({ allowPrivate: [...allowed], allowPrivateSetting: ExecSetting.PrivateNetworks }, ctx.resolve);
  return guardedFetch(guard, { connectTimeoutMs: CONNECT_TIMEOUT_MS });
}

/** Throws ConfigError when the MCP_STDIO_* settings a stdio server needs are wrong. */
function sessionContext(service: McpService, ctx: PluginContext, net: GuardedFetch | undefined): McpSessionContext {
  const basics: Record<string, string | undefined> = {};
  for (const k of STDIO_BASICS) basics[k] = ctx.settings[k];
  const { identity, problems } = readStdioIdentity(ctx.settings, ctx.secrets);
  if (problems.length && service.plugin.options.transport === 'stdio') throw new ConfigError(problems);
  return {
    serviceId: service.id,
    configDir: ctx.configDir,
    secrets: ctx.secrets,
    basics,
    stdio: identity,
    log: ctx.log,
    events: ctx.events,
    fetch: net?.fetch,
  };
}

/** Where files a tool returns go: `MCP_BLOB_DIR`, else `DIFY_BLOB_DIR`; unset: described, not kept. */
function blobSink(ctx: PluginContext): BlobSink {
  const dir = ctx.settings['MCP_BLOB_DIR'] ?? ctx.settings['DIFY_BLOB_DIR'];
  return blobSinkFor(dir, ctx.settings);
}

function progressText(update: { progress: number; total?: number; message?: string }): string {
  return update.message ?? `progress ${update.progress}${update.total !== undefined ? `/${update.total}` : ''}`;
}

/** The tools of one MCP server, served over one long-lived session. */
export class McpPlugin implements Plugin<McpToolOptions> {
  readonly kind = MCP_KIND;

  constructor(
    private readonly session: McpSession,
    private readonly blobs: BlobSink,
    private readonly net: GuardedFetch | undefined,
  ) {}

  invoke(call: ToolCall<McpToolOptions>): Observation {
    const name = call.tool?.pluginOptions.tool ?? call.tool?.name;
    if (!name) return Promise.reject(new ConfigError([`service ${call.service.id}: an mcp service answers only the tools it declares`]));
    const { timeoutMs, hops, requestId: idempotencyKey } = call;
    const args = call.arguments as Record<string, unknown>;
    if (!call.stream) {
      return this.session
        .call(name, args, { signal: call.signal, timeoutMs, hops, idempotencyKey })
        .then((result) => resultText(result, this.blobs, call.signal));
    }
    // Streamed: the server's progress notifications are the chunks, its result the last one.
    const chunks = new AsyncQueue<string>();
    const done = this.session
      .call(name, args, { signal: call.signal, timeoutMs, hops, idempotencyKey, onProgress: (update) => chunks.push(progressText(update)) })
      .then((result) => resultText(result, this.blobs, call.signal))
      .finally(() => chunks.finish());
    // Read after the chunks; until then a failure must not count as unhandled.
    done.catch(() => undefined);
    return (async function* () {
      for await (const c of chunks) yield c;
      yield await done;
    })();
  }

  /** The server's tools, over the session this plugin serves with. */
  listTools(signal: AbortSignal): Promise<McpTool[]> {
    return this.session.listTools(signal);
  }

  async close(): Promise<void> {
    await this.session.close();
    await this.net?.close();
  }
}

/** A problem for each tool whose MCP tool the server does not offer. */
function missingTools(service: McpService, tools: readonly ToolWith<McpToolOptions>[], offeredTools: readonly McpTool[]): string[] {
  const offered = new Set(offeredTools.map((tool) => tool.name));
  return tools
    .map((tool) => ({ tool, name: tool.pluginOptions.tool ?? tool.name }))
    .filter(({ name }) => !offered.has(name))
    .map(
      ({ tool, name }) =>
        `${tool.source}: plugin-options.tool: the MCP server of ${service.id} has no tool "${name}" (it has: ${[...offered].join(', ') || 'none'})`,
    );
}

export const mcpPluginFactory: PluginFactory<McpServiceOptions, McpToolOptions> = {
  ...mcpSchemas,
  /** A stdio server is a command the worker starts: at the check, at create, at each reconnect. */
  async executes(service, _tools, ctx): Promise<Execution[]> {
    const options = service.plugin.options;
    if (options.transport !== 'stdio') return [];
    // As the child is spawned: a name is looked up on PATH, a path is the file this resolves.
    const { cwd, path } = stdioLaunch(options, ctx.configDir, readStdioIdentity(ctx.settings, ctx.secrets).identity.cwd);
    const found: Execution[] = [{ type: 'command', where: `${service.source}: plugin.command`, command: options.command, path }];
    const names = Object.keys(options.env);
    if (names.length > 0) found.push({ type: 'command-env', where: `${service.source}: plugin.env`, command: options.command, names });
    // Unset, it is the operator's (MCP_STDIO_CWD or the config directory).
    if (options.cwd !== undefined) found.push({ type: 'working-dir', where: `${service.source}: plugin.cwd`, dir: cwd });
    return found;
  },
  reaches(service): Reach[] {
    const options = service.plugin.options;
    return options.transport === 'http' ? [{ where: `${service.source}: plugin.url`, url: options.url, allowPrivate: false }] : [];
  },
  /**
   * The server answers `initialize` and lists every tool a descriptor names. When only the
   * tools changed, the running plugin's session is asked, so a stdio server is not started
   * once more; should that session fail, a connection of the check's own decides.
   */
  async check(service, tools, ctx, running): Promise<string[]> {
    if (running instanceof McpPlugin) {
      const offered = await running.listTools(AbortSignal.timeout(30_000)).catch(() => undefined);
      if (offered) return missingTools(service, tools, offered);
    }
    const options = service.plugin.options;
    const net = guardedNet(service, ctx);
    let client;
    try {
      client = await connectMcp(options, sessionContext(service, ctx, net), AbortSignal.timeout(30_000));
    } catch (err) {
      await net?.close();
      if (err instanceof ConfigError) return err.problems.map((problem) => `${service.source}: ${problem}`);
      if (err instanceof AddressRefusedError) return [`${service.source}: plugin.url: ${err.message}`];
      return [`${service.source}: plugin: the MCP server does not answer initialize: ${errorMessage(err)}`];
    }
    try {
      return missingTools(service, tools, await listAllTools(client, AbortSignal.timeout(30_000)));
    } catch (err) {
      return [`${service.source}: plugin: the MCP server does not list its tools: ${errorMessage(err)}`];
    } finally {
      await client.close().catch(() => undefined);
      await net?.close();
    }
  },
  async create(service, ctx): Promise<McpPlugin> {
    const net = guardedNet(service, ctx);
    const session = new McpSession(service.plugin.options, sessionContext(service, ctx, net));
    await session.open(AbortSignal.timeout(30_000)).catch(async (err: unknown) => {
      // Served anyway: calls reconnect, and say what is wrong meanwhile.
      if (err instanceof ConfigError) {
        await net?.close();
        throw err;
      }
      ctx.log.warn({ err: errorMessage(err), service: service.id }, 'MCP server not reachable at start; calls will reconnect');
    });
    return new McpPlugin(session, blobSink(ctx), net);
  },
};
