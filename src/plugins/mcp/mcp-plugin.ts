import type { Tool, ToolService } from '../../catalog/descriptors.js';
import { ConfigError, errorMessage } from '../../errors.js';
import { AsyncQueue } from '../../transport/async-queue.js';
import { blobSinkFor, type BlobSink } from '../blob-sink.js';
import type { Observation, Plugin, PluginContext, PluginFactory, ToolCall } from '../plugin.js';
import { mcpServiceOptions, mcpToolOptions, type McpServiceOptions, type McpToolOptions } from './mcp-options.js';
import { resultText } from './mcp-result.js';
import { connectMcp, listAllTools, McpSession, type McpSessionContext } from './mcp-session.js';

export const MCP_KIND = 'mcp';

/** The environment basics a stdio server inherits from the worker; nothing else of it. */
const BASICS = ['PATH', 'HOME', 'TMPDIR', 'LANG'];

function sessionContext(service: ToolService, ctx: PluginContext): McpSessionContext {
  const basics: Record<string, string | undefined> = {};
  for (const k of BASICS) basics[k] = ctx.settings[k];
  return { serviceId: service.id, configDir: ctx.configDir, secrets: ctx.secrets, basics, log: ctx.log, events: ctx.events };
}

/** Where files a tool returns go: `MCP_BLOB_DIR`, else `DIFY_BLOB_DIR`; unset: described, not kept. */
function blobSink(ctx: PluginContext): BlobSink {
  const dir = ctx.settings['MCP_BLOB_DIR'] ?? ctx.settings['DIFY_BLOB_DIR'];
  return blobSinkFor(dir, ctx.settings);
}

function progressText(p: { progress: number; total?: number; message?: string }): string {
  return p.message ?? `progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}`;
}

/** The tools of one MCP server, served over one long-lived session. */
export class McpPlugin implements Plugin {
  readonly kind = MCP_KIND;

  constructor(
    private readonly session: McpSession,
    private readonly blobs: BlobSink,
  ) {}

  invoke(call: ToolCall): Observation {
    const name = (call.tool?.pluginOptions as McpToolOptions | undefined)?.tool ?? call.tool?.name;
    if (!name) return Promise.reject(new ConfigError([`service ${call.service.id}: an mcp service answers only the tools it declares`]));
    const timeoutMs = call.tool?.timeoutMs ?? call.service.timeoutMs ?? 120_000;
    const args = call.arguments as Record<string, unknown>;
    if (!call.stream) {
      return this.session.call(name, args, { signal: call.signal, timeoutMs }).then((r) => resultText(r, this.blobs, call.signal));
    }
    // Streamed: the server's progress notifications are the chunks, its result the last one.
    const chunks = new AsyncQueue<string>();
    const done = this.session
      .call(name, args, { signal: call.signal, timeoutMs, onProgress: (p) => chunks.push(progressText(p)) })
      .then((r) => resultText(r, this.blobs, call.signal))
      .finally(() => chunks.finish());
    // Read after the chunks; until then a failure must not count as unhandled.
    done.catch(() => undefined);
    return (async function* () {
      for await (const c of chunks) yield c;
      yield await done;
    })();
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

export const mcpPluginFactory: PluginFactory<McpServiceOptions, McpToolOptions> = {
  kind: MCP_KIND,
  serviceOptions: mcpServiceOptions,
  toolOptions: mcpToolOptions,
  /** The server answers `initialize` and lists every tool a descriptor names. */
  async check(service: ToolService, tools: readonly Tool[], ctx: PluginContext): Promise<string[]> {
    const options = service.plugin!.options as McpServiceOptions;
    let client;
    try {
      client = await connectMcp(options, sessionContext(service, ctx), AbortSignal.timeout(30_000));
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.map((p) => `${service.source}: ${p}`);
      return [`${service.source}: plugin: the MCP server does not answer initialize: ${errorMessage(err)}`];
    }
    try {
      const offered = new Set((await listAllTools(client, AbortSignal.timeout(30_000))).map((t) => t.name));
      return tools
        .map((t) => ({ t, name: (t.pluginOptions as McpToolOptions | undefined)?.tool ?? t.name }))
        .filter(({ name }) => !offered.has(name))
        .map(({ t, name }) => `${t.source}: plugin-options.tool: the MCP server of ${service.id} has no tool "${name}" (it has: ${[...offered].join(', ') || 'none'})`);
    } catch (err) {
      return [`${service.source}: plugin: the MCP server does not list its tools: ${errorMessage(err)}`];
    } finally {
      await client.close().catch(() => undefined);
    }
  },
  async create(service: ToolService, ctx: PluginContext): Promise<Plugin> {
    const session = new McpSession(service.plugin!.options as McpServiceOptions, sessionContext(service, ctx));
    await session.open(AbortSignal.timeout(30_000)).catch((err: unknown) => {
      // Served anyway: calls reconnect, and say what is wrong meanwhile.
      if (err instanceof ConfigError) throw err;
      ctx.log.warn({ err: errorMessage(err), service: service.id }, 'MCP server not reachable at start; calls will reconnect');
    });
    return new McpPlugin(session, blobSink(ctx));
  },
};
