import { difyAgentSchemas } from './agent-options.js';
import type { KindSettings } from '../kind-settings.js';

/** The worker settings of the dify-agent plugin, by name (what each means: settings.ts). */
export const DifyAgentSetting = {
  DaemonUrl: 'DIFY_AGENT_DAEMON_URL',
  DaemonKey: 'DIFY_AGENT_DAEMON_KEY',
  TenantId: 'DIFY_AGENT_TENANT_ID',
  Runtime: 'DIFY_AGENT_RUNTIME',
  InnerHost: 'DIFY_INNER_API_HOST',
  InnerPort: 'DIFY_INNER_API_PORT',
  InnerKey: 'DIFY_INNER_API_KEY',
  Model: 'DIFY_AGENT_MODEL',
  ModelUrl: 'DIFY_AGENT_MODEL_URL',
  ModelKey: 'DIFY_AGENT_MODEL_KEY',
  TextCompletionRequestQueue: 'DIFY_AGENT_TEXT_COMPLETION_REQUEST_QUEUE',
  TextCompletionResponseQueue: 'DIFY_AGENT_TEXT_COMPLETION_RESPONSE_QUEUE',
} as const;

/** Dify's variables (DIFY_BLOB_DIR, DIFY_SLIM_MODE among them); its daemon's, inner API's and model's keys are secrets. */
export const difyAgentSettings: KindSettings = {
  prefixes: ['DIFY_'],
  secrets: [DifyAgentSetting.DaemonKey, DifyAgentSetting.InnerKey, DifyAgentSetting.ModelKey],
};

/** The dify-agent kind as the registry takes it: its name, option schemas and settings; no plugin code. */
export const difyAgentKind = { ...difyAgentSchemas, settings: difyAgentSettings } as const;
