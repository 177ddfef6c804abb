import type { PluginEvents } from '../plugin.js';
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport as McpTransport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Progress, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { AbortedError, ConfigError, ToolFailedError, UnavailableError, errorMessage } from '../../errors.js';
import { AddressRefusedError } from '../../net/address-guard.js';
import type { Fetch } from '../../net/guarded-fetch.js';
import { resolveDescriptorValue, type Secrets } from '../../secrets.js';
import { injectTraceContext } from '../../tracing/trace-context.js';
import { Backoff } from '../../async/backoff.js';
import { sleep } from '../../async/sleep.js';
import { isolatingFetch } from './isolating-fetch.js';
import { hopsFetch, withHops } from './hops-fetch.js';
import type { McpServiceOptions } from './mcp-options.js';
import { ProgressRoutingTransport, type ProgressListeners } from './progress-routing-transport.js';
import { StdioChildTransport } from './stdio-child-transport.js';
import type { StdioIdentity } from './stdio-identity.js';
import { stdioLaunch } from './stdio-launch.js';

/**
 * The `_meta` key of a `tools/call` that carries the request's idempotency key: its id, the
 * same on every delivery and worker. Namespaced as MCP asks of keys of one's own (a reverse-DNS
 * prefix whose second label is not `mcp` or `modelcontextprotocol`).
 */
export const IDEMPOTENCY_META_KEY = 'io.toolwire/idempotency-key';

/** What a session needs from the worker: its settings and secrets, never a request's. */
export interface McpSessionContext {
  readonly serviceId: string;
  readonly configDir: string;
  readonly secrets: Secrets;
  /** The worker's own environment basics (PATH, HOME, TMPDIR, LANG), the only ones a child inherits. */
  readonly basics: Readonly<Record<string, string | undefined>>;
  /** Who a stdio server runs as, and where by default (MCP_STDIO_*); unset: the worker's user, in the config directory. */
  readonly stdio?: StdioIdentity | undefined;
  readonly log: Logger;
  readonly events?: PluginEvents | undefined;
  /** An http server is reached through this fetch (the address guard) when the operator bounds private addresses; undefined: Node's fetch. */
  readonly fetch?: Fetch | undefined;
}

/** The transport to the server, built from the descriptor and the worker's secrets; throws ConfigError for a reference that does not resolve. */
export function mcpTransport(options: McpServiceOptions, ctx: McpSessionContext): McpTransport {
  if (options.transport === 'stdio') {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(ctx.basics)) if (v !== undefined) env[k] = v;
    for (const [k, v] of Object.entries(options.env)) env[k] = resolveDescriptorValue(v, `plugin.env.${k}`, ctx.secrets);
    // The file the exec policy ruled on, by its absolute path (a bare name: PATH, as ruled).
    const { cwd, path } = stdioLaunch(options, ctx.configDir, ctx.stdio?.cwd);
    return new StdioChildTransport({
      command: path ?? options.command,
      args: options.args,
      env,
      cwd,
      uid: ctx.stdio?.uid,
      gid: ctx.stdio?.gid,
      // The server's own log, kept at debug: it is a third party's text.
      onStderr: (text) => ctx.log.debug({ stderr: text.slice(0, 2000) }, 'mcp server stderr'),
    });
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.headers)) headers[k] = resolveDescriptorValue(v, `plugin.headers.${k}`, ctx.secrets);
  if (options.token) headers['authorization'] = `Bearer ${resolveDescriptorValue(options.token, 'plugin.token', ctx.secrets)}`;
  return new StreamableHTTPClientTransport(new URL(options.url), {
    requestInit: { headers, redirect: 'error' },
    // A call's hop count goes on, so a server that leads back to the fleet (mcp serve) counts it.
    fetch: hopsFetch(isolatingFetch(ctx.fetch)),
  });
}

/** The server's whole tool list, page by page. */
export async function listAllTools(client: Client, signal?: AbortSignal): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** Connect, initialize, and hand back the client; the caller closes it. Progress of a call with a listener in `progress` goes to it. */
export async function connectMcp(options: McpServiceOptions, ctx: McpSessionContext, signal?: AbortSignal, progress?: ProgressListeners): Promise<Client> {
  const client = new Client({ name: 'toolwire', version: '1' });
  const transport = mcpTransport(options, ctx);
  try {
    await client.connect(progress ? new ProgressRoutingTransport(transport, progress) : transport, { signal });
  } catch (err) {
    // The SDK says only "Connection closed" (or the write that failed) of a server that died at start.
    const why = transport instanceof StdioChildTransport && !(err instanceof AbortedError) && !signal?.aborted ? await transport.endedEarly() : undefined;
    if (why === undefined) throw err;
    throw new UnavailableError(`${errorMessage(err)}: ${why}`, { cause: err });
  }
  return client;
}

/**
 * One long-lived MCP session per service. It connects on open; when the server goes away
 * (a stdio child that died, an HTTP server that stopped answering) the calls in flight fail
 * with a retriable error and the next call connects again, with backoff between attempts.
 */
export class McpSession {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private readonly backoff = new Backoff({ initialDelayMs: 200, maxDelayMs: 10_000 });
  private closed = false;
  /** The progress listeners of the calls in flight (not the SDK's onprogress: it drops progress read with the result). */
  private readonly progress: ProgressListeners = new Map();
  /** How many times a session was opened (the first, then each reconnect). */
  connects = 0;

  constructor(
    private readonly options: McpServiceOptions,
    private readonly ctx: McpSessionContext,
  ) {}

  /** Wait for a connected client, connecting (again) if needed; bounded by `signal`. */
  private ready(signal?: AbortSignal): Promise<Client> {
    if (this.closed) return Promise.reject(new AbortedError('the MCP session is closed'));
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    if (!signal) return this.connecting;
    return Promise.race([
      this.connecting,
      new Promise<never>((_, reject) => {
        if (signal.aborted) reject(new AbortedError('aborted while connecting to the MCP server'));
        signal.addEventListener('abort', () => reject(new AbortedError('aborted while connecting to the MCP server')), { once: true });
      }),
    ]);
  }

  private async connect(): Promise<Client> {
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new AbortedError('the MCP session is closed');
      if (attempt > 0) await sleep(this.backoff.next());
      try {
        const client = await connectMcp(this.options, this.ctx, undefined, this.progress);
        if (this.connects > 0) this.ctx.events?.count('reconnect');
        this.connects++;
        this.backoff.reset();
        client.onclose = () => {
          if (this.client === client) this.client = undefined;
          if (!this.closed) this.ctx.log.warn({ service: this.ctx.serviceId }, 'MCP server connection closed; the next call reconnects');
        };
        if (this.closed) {
          await client.close();
          throw new AbortedError('the MCP session is closed');
        }
        this.client = client;
        return client;
      } catch (err) {
        if (err instanceof ConfigError || err instanceof AbortedError) throw err;
        // Not retried: the next call asks again (and the name is looked up again).
        if (err instanceof AddressRefusedError) throw new ToolFailedError(`the MCP server's address is refused: ${err.message}`, { cause: err });
        this.ctx.log.warn({ err: errorMessage(err), service: this.ctx.serviceId, attempt }, 'cannot reach the MCP server; retrying');
      }
    }
  }

  /** Open the session now (at start), so a broken server shows before the first request. */
  async open(signal?: AbortSignal): Promise<void> {
    await this.ready(signal);
  }

  async listTools(signal?: AbortSignal): Promise<McpTool[]> {
    return listAllTools(await this.ready(signal), signal);
  }

  /**
   * `tools/call`. The signal cancels it (the SDK sends notifications/cancelled); the SDK's own
   * request timeout is set past the tool's, which the worker enforces through the signal.
   * `idempotencyKey` (the request's id) goes in `_meta` as IDEMPOTENCY_META_KEY.
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; onProgress?: (progress: Progress) => void; hops?: number; idempotencyKey?: string },
  ): Promise<CallToolResult> {
    const client = await this.ready(options.signal);
    // The worker's span travels in `_meta` under the W3C names, as `mcp serve` reads it; the
    // idempotency key and, when the call wants progress, the progress token beside it.
    const meta: Record<string, string> = {};
    injectTraceContext(meta);
    if (options.idempotencyKey !== undefined) meta[IDEMPOTENCY_META_KEY] = options.idempotencyKey;
    const token = options.onProgress ? randomUUID() : undefined;
    if (token !== undefined) {
      meta['progressToken'] = token;
      this.progress.set(token, options.onProgress!);
    }
    try {
      return (await withHops(options.hops, () =>
        client.callTool({ name, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) }, undefined, {
          signal: options.signal,
          timeout: options.timeoutMs + 1000,
        }),
      )) as CallToolResult;
    } catch (err) {
      if (options.signal.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : new AbortedError('call aborted');
      throw new UnavailableError(`the MCP server failed the call: ${errorMessage(err)}`, { cause: err });
    } finally {
      if (token !== undefined) this.progress.delete(token);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    await c?.close().catch(() => undefined);
    await this.connecting?.catch(() => undefined);
  }
}
