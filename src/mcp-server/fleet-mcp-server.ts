import { VERSION } from '../version.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { tracingEnabled } from '../tracing/trace-context.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolClient } from '../client/tool-client.js';
import { TimeoutError, ToolwireError, errorMessage } from '../errors.js';
import { HOPS_HEADER, readHops } from '../envelope/hops.js';
import { toolInputSchema } from '../arguments/json-schema.js';

export interface FleetDeps {
  /** The catalog being served now. */
  readonly catalog: () => Catalog;
  /** Calls the listener after each change of the catalog; returns how to stop listening. */
  readonly onCatalogChange: (listener: () => void) => () => void;
  /** Publishes requests on the broker (or in process), as an agent. */
  readonly client: ToolClient;
  readonly log: Logger;
  /** Calls in flight at once, over all sessions; past it a call is answered as an error at once. */
  readonly maxInFlight: number;
  /** A call's time, from the client's request to the tool's final answer. */
  readonly callTimeoutMs: number;
}

const failed = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** Counts calls in flight across every session of one `mcp serve`. */
export class InFlight {
  count = 0;
}

/**
 * One MCP server session over the fleet's tools: `tools/list` is the catalog with each
 * tool's model-facing JSON Schema (as /v1/tools gives it), `tools/call` publishes a request
 * the way an agent does, so whichever worker takes it answers. Stream chunks become progress
 * notifications when the client asked for progress; an error answer is an `isError` result;
 * the client's cancellation aborts the call. Announces `tools/list_changed` on a new catalog.
 */
export function fleetMcpServer(deps: FleetDeps, inFlight: InFlight): { server: Server; dispose: () => void } {
  const server = new Server({ name: 'toolwire', version: VERSION }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...deps.catalog().tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: toolInputSchema(tool.parameters),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const catalog = deps.catalog();
    const tool = catalog.tools.get(req.params.name);
    const service = tool && catalog.services.get(tool.service);
    if (!tool || !service) return failed(`unknown-tool: there is no tool named ${JSON.stringify(req.params.name)}`);
    let hops: number | undefined;
    try {
      // Over HTTP, a call an agent's tool made back through this server: counted on, refused past the limit.
      hops = readHops(extra.requestInfo?.headers[HOPS_HEADER]);
    } catch (err) {
      if (err instanceof ToolwireError) return failed(`${err.code}: ${err.message}`);
      throw err;
    }
    if (inFlight.count >= deps.maxInFlight) return failed(`unavailable: ${inFlight.count} calls are in flight, the most this server takes; try again`);
    inFlight.count++;
    const progressToken = req.params._meta?.progressToken;
    const signal = AbortSignal.any([extra.signal, AbortSignal.timeout(deps.callTimeoutMs)]);
    const parts: string[] = [];
    // An MCP client's trace context, sent in `_meta` (W3C keys), becomes the parent of the
    // worker's span: the request published below carries it.
    const meta = req.params._meta;
    const parent = tracingEnabled() && typeof meta?.['traceparent'] === 'string' ? propagation.extract(ROOT_CONTEXT, meta) : undefined;
    const run = async (): Promise<CallToolResult> => {
      try {
        let n = 0;
        for await (const r of deps.client.stream({
          requestQueue: service.requestQueue,
          responseQueue: service.responseQueue,
          config: { ...tool.config },
          arguments: req.params.arguments ?? {},
          tool: tool.name,
          stream: progressToken !== undefined,
          timeoutMs: deps.callTimeoutMs,
          signal,
          ...(hops !== undefined ? { hops } : {}),
        })) {
          if (r.error) return failed(`${r.error.type}: ${r.error.message}`);
          if (r.response === '') continue;
          parts.push(r.response);
          if (progressToken !== undefined && !r.endOfStream) {
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: ++n, message: r.response } });
          }
        }
        return { content: [{ type: 'text', text: parts.join('') }] };
      } catch (err) {
        if (extra.signal.aborted) return failed('aborted: the client cancelled the call');
        // The client's own timeout says `timeout`; a broker that cannot be reached, `unavailable`.
        return failed(`${err instanceof TimeoutError ? err.code : 'unavailable'}: ${errorMessage(err)}`);
      } finally {
        inFlight.count--;
      }
    };
    return parent ? context.with(parent, run) : run();
  });
  const dispose = deps.onCatalogChange(() => {
    server.sendToolListChanged().catch((err: unknown) => deps.log.debug({ err }, 'tools/list_changed not sent'));
  });
  return { server, dispose };
}
