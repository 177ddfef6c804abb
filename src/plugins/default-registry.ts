import { difyAgentSettings } from './dify-agent/agent-kind.js';
import { difyAgentSchemas } from './dify-agent/agent-options.js';
import { difyDaemonSchemas, difyDaemonSettings } from './dify-daemon/daemon-kind.js';
import { difySlimSchemas, difySlimSettings } from './dify-slim/slim-kind.js';
import { mcpSettings } from './mcp/mcp-kind.js';
import { mcpSchemas } from './mcp/mcp-options.js';
import { moduleSchemas } from './module/module-options.js';
import { openApiSettings } from './openapi/openapi-kind.js';
import { openApiSchemas } from './openapi/openapi-options.js';
import { PluginRegistry } from './registry.js';

/**
 * Every plugin kind that ships with toolwire, by its schemas and the settings it reads; each
 * kind's code (the MCP SDK, the HTTP client, Dify's clients) is imported only once a
 * descriptor of that kind is checked.
 */
export function defaultRegistry(): PluginRegistry {
  return new PluginRegistry()
    .registerKind({
      ...moduleSchemas,
      load: async () => (await import('./module/module-plugin.js')).modulePluginFactory,
    })
    .registerKind({
      ...difyDaemonSchemas,
      settings: difyDaemonSettings,
      load: async () => (await import('./dify-daemon/dify-daemon-plugin.js')).difyDaemonPluginFactory,
    })
    .registerKind({
      ...difySlimSchemas,
      settings: difySlimSettings,
      load: async () => (await import('./dify-slim/dify-slim-plugin.js')).difySlimPluginFactory,
    })
    .registerKind({
      ...mcpSchemas,
      settings: mcpSettings,
      load: async () => (await import('./mcp/mcp-plugin.js')).mcpPluginFactory,
    })
    .registerKind({
      ...openApiSchemas,
      settings: openApiSettings,
      load: async () => (await import('./openapi/openapi-plugin.js')).openApiPluginFactory,
    })
    .registerKind({
      ...difyAgentSchemas,
      settings: difyAgentSettings,
      load: async () => (await import('./dify-agent/dify-agent-plugin.js')).difyAgentPluginFactory,
    });
}
