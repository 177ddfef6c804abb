import { difyAgentSchemas } from './dify-agent/agent-options.js';
import { difyDaemonSchemas } from './dify-daemon/daemon-kind.js';
import { difySlimSchemas } from './dify-slim/slim-kind.js';
import { mcpSchemas } from './mcp/mcp-options.js';
import { moduleSchemas } from './module/module-options.js';
import { openApiSchemas } from './openapi/openapi-options.js';
import { PluginRegistry } from './registry.js';

/**
 * Every plugin kind that ships with toolwire, by its schemas; each kind's code (the MCP SDK,
 * the HTTP client, Dify's clients) is imported only once a descriptor of that kind is checked.
 */
export function defaultRegistry(): PluginRegistry {
  return new PluginRegistry()
    .registerKind({
      ...moduleSchemas,
      load: async () => (await import('./module/module-plugin.js')).modulePluginFactory,
    })
    .registerKind({
      ...difyDaemonSchemas,
      load: async () => (await import('./dify-daemon/dify-daemon-plugin.js')).difyDaemonPluginFactory,
    })
    .registerKind({
      ...difySlimSchemas,
      load: async () => (await import('./dify-slim/dify-slim-plugin.js')).difySlimPluginFactory,
    })
    .registerKind({
      ...mcpSchemas,
      load: async () => (await import('./mcp/mcp-plugin.js')).mcpPluginFactory,
    })
    .registerKind({
      ...openApiSchemas,
      load: async () => (await import('./openapi/openapi-plugin.js')).openApiPluginFactory,
    })
    .registerKind({
      ...difyAgentSchemas,
      load: async () => (await import('./dify-agent/dify-agent-plugin.js')).difyAgentPluginFactory,
    });
}
