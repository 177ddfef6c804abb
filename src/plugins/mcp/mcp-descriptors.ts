import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { objectSchemaArguments } from '../../arguments/object-schema-arguments.js';

/** A tool's declared arguments, from its `inputSchema`. */
export function argumentsOf(tool: McpTool): Record<string, unknown>[] {
  return objectSchemaArguments(tool.inputSchema);
}

export interface McpImportOptions {
  readonly service: string;
  /** The tool descriptors' names: `<prefix><mcp tool name>`. */
  readonly prefix: string;
}

/**
 * Tool descriptors for an MCP server's tools. Each sets the service's config param `tool`
 * to its MCP tool's name, so an agent that sends a tool's config values (as TrustGraph's do)
 * reaches the right one; `plugin-options.tool` names the MCP tool the call goes to.
 */
export function mcpToolDescriptors(tools: readonly McpTool[], options: McpImportOptions): Record<string, unknown>[] {
  return tools.map((tool) => ({
    type: 'tool-service',
    name: `${options.prefix}${tool.name}`,
    description: tool.description ?? tool.title ?? tool.name,
    service: options.service,
    tool: tool.name,
    'plugin-options': { tool: tool.name },
    arguments: argumentsOf(tool),
  }));
}
