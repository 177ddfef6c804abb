import type { TypedTool } from './typed-tool.js';
import { typedToolArguments } from './typed-tool.js';

export interface ModuleImportOptions {
  readonly service: string;
  /** The tool descriptors' names: `<prefix><tool name>`. */
  readonly prefix: string;
}

/**
 * Tool descriptors for a module's typed tools, as `mcp import` writes them for an MCP
 * server's: the service's config param `tool` names the typed tool (agents that send config
 * values reach the right one), and `plugin-options.tool` is what the module plugin calls.
 */
export function typedToolDescriptors(tools: readonly TypedTool[], o: ModuleImportOptions): Record<string, unknown>[] {
  return tools.map((t) => ({
    type: 'tool-service',
    name: `${o.prefix}${t.name}`,
    description: t.description,
    service: o.service,
    tool: t.name,
    'plugin-options': { tool: t.name },
    arguments: typedToolArguments(t),
  }));
}
