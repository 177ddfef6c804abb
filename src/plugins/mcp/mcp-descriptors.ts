import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject } from '../../plain-object.js';

type JsonSchema = Record<string, unknown>;

/** One property of a tool's input schema as an argument declaration the model sees. */
function argument(name: string, schema: JsonSchema, required: boolean): Record<string, unknown> {
  const type = Array.isArray(schema['type']) ? (schema['type'] as unknown[]).find((t) => t !== 'null') : schema['type'];
  const out: Record<string, unknown> = { name, required };
  if (typeof schema['description'] === 'string') out['description'] = schema['description'];
  if (schema['default'] !== undefined) out['default'] = schema['default'];
  const enumValues = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
  if (enumValues && enumValues.every((v) => typeof v === 'string' || typeof v === 'number')) {
    out['type'] = 'select';
    out['options'] = enumValues;
  } else if (type === 'number' || type === 'integer') {
    out['type'] = 'number';
    if (typeof schema['minimum'] === 'number') out['min'] = schema['minimum'];
    if (typeof schema['maximum'] === 'number') out['max'] = schema['maximum'];
  } else if (type === 'boolean') {
    out['type'] = 'boolean';
  } else if (type === 'array' || type === 'object') {
    // The shape is kept whole, so the model sees nested fields as the server declares them.
    out['type'] = type;
    out['input_schema'] = schema;
  } else {
    out['type'] = 'string';
  }
  return out;
}

/** A tool's declared arguments, from its `inputSchema`. */
export function argumentsOf(tool: McpTool): Record<string, unknown>[] {
  const schema = tool.inputSchema as JsonSchema;
  const properties = isPlainObject(schema['properties']) ? schema['properties'] : {};
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  return Object.entries(properties).map(([name, s]) => argument(name, isPlainObject(s) ? s : {}, required.has(name)));
}

export interface ImportOptions {
  readonly service: string;
  /** The tool descriptors' names: `<prefix><mcp tool name>`. */
  readonly prefix: string;
}

/**
 * Tool descriptors for an MCP server's tools. Each sets the service's config param `tool`
 * to its MCP tool's name, so an agent that sends a tool's config values (as TrustGraph's do)
 * reaches the right one; `plugin-options.tool` names the MCP tool the call goes to.
 */
export function toolDescriptors(tools: readonly McpTool[], o: ImportOptions): Record<string, unknown>[] {
  return tools.map((t) => ({
    type: 'tool-service',
    name: `${o.prefix}${t.name}`,
    description: t.description ?? t.title ?? t.name,
    service: o.service,
    tool: t.name,
    'plugin-options': { tool: t.name },
    arguments: argumentsOf(t),
  }));
}
