import { difyAgentKind } from './dify-agent/agent-kind.js';
import { difyDaemonKind } from './dify-daemon/daemon-kind.js';
import { difySlimKind } from './dify-slim/slim-kind.js';
import { mcpKind } from './mcp/mcp-kind.js';
import { moduleKind } from './module/module-kind.js';
import { openApiKind } from './openapi/openapi-kind.js';
import { PluginRegistry } from './registry.js';

/**
 * Every plugin kind that ships with toolwire, each by its declaration (`<kind>-kind.ts`: name,
 * option schemas, the settings it reads); each kind's code (the MCP SDK, the HTTP client,
 * Dify's clients) is imported only once a descriptor of that kind is checked.
 */
export function defaultRegistry(): PluginRegistry {
  return new PluginRegistry()
    .registerKind({ ...moduleKind, load: async () => (await import('./module/module-plugin.js')).modulePluginFactory })
    .registerKind({ ...difyDaemonKind, load: async () => (await import('./dify-daemon/dify-daemon-plugin.js')).difyDaemonPluginFactory })
    .registerKind({ ...difySlimKind, load: async () => (await import('./dify-slim/dify-slim-plugin.js')).difySlimPluginFactory })
    .registerKind({ ...mcpKind, load: async () => (await import('./mcp/mcp-plugin.js')).mcpPluginFactory })
    .registerKind({ ...openApiKind, load: async () => (await import('./openapi/openapi-plugin.js')).openApiPluginFactory })
    .registerKind({ ...difyAgentKind, load: async () => (await import('./dify-agent/dify-agent-plugin.js')).difyAgentPluginFactory });
}
