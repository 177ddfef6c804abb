import { ARGUMENTS_FROM_MODULE } from '../../catalog/descriptors.js';
import type { TypedTool } from './typed-tool.js';
import { typedToolArguments } from './typed-tool.js';

export interface ModuleImportOptions {
  readonly service: string;
  /** The tool descriptors' names: `<prefix><tool name>`. */
  readonly prefix: string;
  /** Write `"arguments": "from-module"`: the worker reads them from the schema, so a schema edit needs no new descriptors. */
  readonly argumentsFromModule?: boolean;
}

/**
 * Tool descriptors for a module's typed tools, as `mcp import` writes them for an MCP
 * server's: the service's config param `tool` names the typed tool (agents that send config
 * values reach the right one), and `plugin-options.tool` is what the module plugin calls.
 */
export function typedToolDescriptors(tools: readonly TypedTool[], options: ModuleImportOptions): Record<string, unknown>[] {
  return tools.map((tool) => ({
    type: 'tool-service',
    name: `${options.prefix}${tool.name}`,
    description: tool.description,
    service: options.service,
    tool: tool.name,
    'plugin-options': { tool: tool.name },
    arguments: options.argumentsFromModule ? ARGUMENTS_FROM_MODULE : typedToolArguments(tool),
  }));
}
