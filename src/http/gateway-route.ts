import { context, propagation } from '@opentelemetry/api';
import { z } from 'zod';
import { tracingEnabled } from '../tracing/trace-context.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolClient } from '../client/tool-client.js';
import { ErrorCode, HopLimitError, InvalidArgumentsError, InvalidRequestError, ToolwireError } from '../errors.js';
import { HOPS_HEADER, readHops } from '../envelope/hops.js';
import { prepareArguments } from '../arguments/prepare-arguments.js';
import { GATEWAY_ERROR } from './gateway-error.js';
import { json, readBody } from './http-io.js';

/** An invoke's body; what the document at /openapi.json describes, refused with 400 otherwise. */
const invokeBodySchema = z.looseObject({
  arguments: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  stream: z.boolean({ error: 'must be true or false' }).optional(),
  user: z.string({ error: 'must be a string' }).optional(),
});

export { GATEWAY_ERROR } from './gateway-error.js';

export interface GatewaySources {
  readonly catalog: () => Catalog;
  readonly client: ToolClient;
  readonly log: Logger;
  readonly maxBodyBytes?: number;
}

/**
 * `POST /v1/tools/<name>/invoke`: call the tool the way an agent does (through the transport)
 * and stream the response messages as Server-Sent Events.
 */
export async function invokeTool(name: string, req: IncomingMessage, res: ServerResponse, sources: GatewaySources): Promise<void> {
  const catalog = sources.catalog();
  const tool = catalog.tools.get(name);
  const service = tool ? catalog.services.get(tool.service) : undefined;
  if (!tool || !service) return json(res, 404, { error: `there is no tool named ${JSON.stringify(name)}`, type: ErrorCode.UnknownTool });
  let hops: number | undefined;
  try {
    // A call an agent's tool made back through this gateway: counted on, and refused past the limit (508 Loop Detected).
    hops = readHops(req.headers[HOPS_HEADER]);
  } catch (err) {
    if (err instanceof HopLimitError) return json(res, 508, { error: err.message, type: err.code });
    if (err instanceof InvalidRequestError) return json(res, 400, { error: err.message, type: err.code });
    throw err;
  }
  const text = await readBody(req, sources.maxBodyBytes ?? 1024 * 1024);
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return json(res, 400, { error: 'body must be JSON: {"arguments": {...}, "stream": false}', type: ErrorCode.InvalidRequest });
  }
  const checked = invokeBodySchema.safeParse(parsed);
  if (!checked.success) {
    const i = checked.error.issues[0]!;
    return json(res, 400, {
      error: i.path.length ? `"${i.path.join('.')}": ${i.message}` : `body must be a JSON object: ${i.message}`,
      type: ErrorCode.InvalidRequest,
    });
  }
  const body = checked.data;
  const args = body.arguments ?? {};
  try {
    // The worker's own check, made here too so that arguments it would refuse get an HTTP 400.
    prepareArguments(tool.parameters, tool.runtimeParameters, args);
  } catch (err) {
    if (err instanceof InvalidArgumentsError) return json(res, 400, { error: err.message, type: err.code });
    throw err;
  }
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  // A caller's `traceparent` header becomes the parent of the worker's span.
  const parent = tracingEnabled() ? propagation.extract(context.active(), req.headers) : undefined;
  const call = async (): Promise<void> => {
    try {
      for await (const r of sources.client.stream({
        requestQueue: service.requestQueue,
        responseQueue: service.responseQueue,
        config: tool.config,
        arguments: args,
        ...(body.user !== undefined ? { user: body.user } : {}),
        stream: body.stream === true,
        tool: tool.name,
        signal: abort.signal,
        ...(hops !== undefined ? { hops } : {}),
      })) {
        res.write(`data: ${JSON.stringify({ error: r.error, response: r.response, end_of_stream: r.endOfStream })}\n\n`);
      }
    } catch (err) {
      if (!abort.signal.aborted) {
        // The worker's rule: only toolwire's own error text reaches a caller; anything else is
        // a fault whose message (a path, a secret) stays in the log.
        if (!(err instanceof ToolwireError)) sources.log.error({ err, tool: tool.name }, 'gateway call failed');
        const message = err instanceof ToolwireError ? err.message : 'internal error in the gateway';
        res.write(`data: ${JSON.stringify({ error: { type: GATEWAY_ERROR, message }, response: '', end_of_stream: true })}\n\n`);
      }
    }
  };
  await (parent ? context.with(parent, call) : call());
  res.end();
}
