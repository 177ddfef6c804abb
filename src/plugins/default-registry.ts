import { DIFY_AGENT_KIND, difyAgentOptionsSchema } from './dify-agent/agent-options.js';
import { difyDaemonSchemas } from './dify-daemon/daemon-kind.js';
import { difySlimSchemas } from './dify-slim/slim-kind.js';
import { MCP_KIND, mcpServiceOptions, mcpToolOptions } from './mcp/mcp-options.js';
import { MODULE_KIND, moduleServiceOptions, moduleToolOptions } from './module/module-options.js';
import { OPENAPI_KIND, openApiServiceOptions, openApiToolOptions } from './openapi/openapi-options.js';
import { PluginRegistry } from './registry.js';

/**
 * Every plugin kind that ships with toolwire, by its schemas; each kind's code (the MCP SDK,
 * the HTTP client, Dify's clients) is imported only once a descriptor of that kind is checked.
 */
export function defaultRegistry(): PluginRegistry {
  return new PluginRegistry()
    .registerKind({
      kind: MODULE_KIND,
      serviceOptions: moduleServiceOptions,
      toolOptions: moduleToolOptions,
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
      kind: MCP_KIND,
      serviceOptions: mcpServiceOptions,
      toolOptions: mcpToolOptions,
      load: async () => (await import('./mcp/mcp-plugin.js')).mcpPluginFactory,
    })
    .registerKind({
      kind: OPENAPI_KIND,
      serviceOptions: openApiServiceOptions,
      toolOptions: openApiToolOptions,
      load: async () => (await import('./openapi/openapi-plugin.js')).openApiPluginFactory,
    })
    .registerKind({
      kind: DIFY_AGENT_KIND,
      serviceOptions: difyAgentOptionsSchema,
      toolOptions: difyAgentOptionsSchema,
      load: async () => (await import('./dify-agent/dify-agent-plugin.js')).difyAgentPluginFactory,
    });
}
