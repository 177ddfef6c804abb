import { difyAgentPluginFactory } from './dify-agent/dify-agent-plugin.js';
import { difyDaemonPluginFactory } from './dify-daemon/dify-daemon-plugin.js';
import { difySlimPluginFactory } from './dify-slim/dify-slim-plugin.js';
import { mcpPluginFactory } from './mcp/mcp-plugin.js';
import { modulePluginFactory } from './module/module-plugin.js';
import { openApiPluginFactory } from './openapi/openapi-plugin.js';
import { PluginRegistry } from './registry.js';

/** Every plugin kind that ships with toolwire. */
export function defaultRegistry(): PluginRegistry {
  return new PluginRegistry()
    .register(modulePluginFactory)
    .register(difyDaemonPluginFactory)
    .register(difySlimPluginFactory)
    .register(mcpPluginFactory)
    .register(openApiPluginFactory)
    .register(difyAgentPluginFactory);
}
