import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolClient } from '../client/tool-client.js';
import { json, readBody } from './http-io.js';

/** The error type of the gateway's own last event when the call could not be made through the broker (not a worker's answer). */
export const GATEWAY_ERROR = 'gateway-error';

export interface GatewaySources {
  readonly catalog: () => Catalog;
  readonly client: ToolClient;
  readonly maxBodyBytes?: number;
}

/**
 * `POST /v1/tools/<name>/invoke`: call the tool the way an agent does (through the transport)
 * and stream the response messages as Server-Sent Events.
 */
export async function invokeTool(name: string, req: IncomingMessage, res: ServerResponse, o: GatewaySources): Promise<void> {
    const catalog = o.catalog();
    const tool = catalog.tools.get(name);
    const service = tool ? catalog.services.get(tool.service) : undefined;
    if (!tool || !service) return json(res, 404, { error: `there is no tool named ${JSON.stringify(name)}` });
    const text = await readBody(req, o.maxBodyBytes ?? 1024 * 1024);
    let body: { arguments?: unknown; stream?: unknown; user?: unknown };
    try {
      body = text.trim() === '' ? {} : (JSON.parse(text) as typeof body);
    } catch {
      return json(res, 400, { error: 'body must be JSON: {"arguments": {...}, "stream": false}' });
    }
    const args = body.arguments ?? {};
    if (args === null || typeof args !== 'object' || Array.isArray(args)) return json(res, 400, { error: '"arguments" must be an object' });
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    try {
      for await (const r of o.client.stream({
        requestQueue: service.requestQueue,
        responseQueue: service.responseQueue,
        config: tool.config as Record<string, unknown>,
        arguments: args as Record<string, unknown>,
        ...(typeof body.user === 'string' ? { user: body.user } : {}),
        stream: body.stream === true,
        tool: tool.name,
        signal: abort.signal,
      })) {
        res.write(`data: ${JSON.stringify({ error: r.error, response: r.response, end_of_stream: r.endOfStream })}\n\n`);
      }
    } catch (err) {
      if (!abort.signal.aborted) {
        res.write(`data: ${JSON.stringify({ error: { type: GATEWAY_ERROR, message: (err as Error).message }, response: '', end_of_stream: true })}\n\n`);
      }
    }
    res.end();
}
