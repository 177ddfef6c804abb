import type { ServerResponse } from 'node:http';
import type { Catalog } from '../catalog/catalog.js';
import type { ConfigStatus } from '../config/config-follower.js';
import { toolInputSchema } from '../arguments/json-schema.js';
import { json } from './http-io.js';

/** `GET /v1/tools`: every tool with its model-facing schema, and the config version served. */
export function listTools(res: ServerResponse, catalog: Catalog, config: ConfigStatus | undefined): void {
  const tools = [...catalog.tools.values()].map((tool) => ({
    name: tool.name,
    description: tool.description,
    service: tool.service,
    input_schema: toolInputSchema(tool.parameters),
  }));
  json(res, 200, { tools, ...(config ? { config: { version: config.version, rejected: config.rejected } } : {}) });
}
