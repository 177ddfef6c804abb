import type { Catalog } from '../catalog/catalog.js';
import type { Fleet } from '../plugins/plugin.js';
import { ToolResponseError, type ToolClient } from '../client/tool-client.js';

/**
 * The fleet as a plugin sees it: tools of the catalog being served, called on the broker with
 * the worker's own client, so whichever worker serves a tool answers it.
 */
export function fleetOn(client: ToolClient, catalog: () => Catalog | undefined): Fleet {
  return {
    tool(name) {
      const c = catalog();
      const tool = c?.tools.get(name);
      const service = tool ? c?.services.get(tool.service) : undefined;
      return tool && service ? { tool, service } : undefined;
    },
    async *call({ tool, service }, args, options) {
      for await (const r of client.stream({
        requestQueue: service.requestQueue,
        responseQueue: service.responseQueue,
        config: { ...tool.config },
        arguments: args,
        tool: tool.name,
        stream: true,
        signal: options.signal,
        ...(options.user ? { user: options.user } : {}),
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.hops !== undefined ? { hops: options.hops } : {}),
      })) {
        if (r.error) throw new ToolResponseError(r.error.type, r.error.message);
        if (r.response) yield r.response;
      }
    },
    async *exchange(topics, body, options) {
      for await (const answer of client.exchange.request({ requestQueue: topics.request, responseQueue: topics.response, data: body, signal: options.signal }))
        yield answer.data;
    },
  };
}
