import type { Tool, ToolService } from '../../catalog/descriptors.js';
import { isPlainObject } from '../../plain-object.js';
import type { Secrets } from '../../secrets.js';
import { agentError } from '../dify-common/agent-error.js';
import { resolveCredentials, resolveTarget } from '../dify-common/dify-tool-options.js';
import { DifyDaemonClient } from '../dify-common/daemon-client.js';
import type { DifyDaemonSettings } from './settings.js';

/**
 * Ask the plugin daemon (`tool/validate_credentials`, the check Dify runs when a user saves a
 * provider's credentials) whether each provider's credentials of a service are good. Opt-in:
 * it runs the plugin's own validation code against its upstream. `tool/invoke` never runs it,
 * so without this a bad credential is found at the first agent call. Returns one problem per
 * provider refused or not checkable, with the descriptor named.
 */
export async function validateServiceCredentials(
  service: ToolService,
  tools: readonly Tool[],
  settings: DifyDaemonSettings,
  secrets: Secrets,
  signal: AbortSignal,
): Promise<string[]> {
  const client = new DifyDaemonClient({ url: settings.url, key: settings.key, tenantId: settings.tenantId });
  const problems: string[] = [];
  const checked = new Set<string>();
  for (const tool of tools.length > 0 ? tools : [undefined]) {
    const r = resolveTarget(service, tool, 'plugin_id');
    // Incomplete options are the load-time check's to report.
    if (!r.ok) continue;
    const t = r.target;
    const pluginId = t.pluginId;
    if (pluginId === undefined || t.credentialType === 'unauthorized') continue;
    const key = `${pluginId}\n${t.provider}\n${JSON.stringify(t.credentialRefs)}`;
    if (checked.has(key)) continue;
    checked.add(key);
    const where = `${service.source}: provider ${t.provider} of ${pluginId}`;
    const { values, missing } = resolveCredentials(t.credentialRefs, secrets);
    if (missing.length > 0) {
      problems.push(`${where}: credentials do not resolve: ${missing.join(', ')}`);
      continue;
    }
    let result: boolean | 'error' | undefined;
    const payload = { user_id: settings.userId, data: { provider: t.provider, credentials: values } };
    for await (const item of client.dispatch('tool/validate_credentials', pluginId, payload, signal)) {
      if (item.kind === 'error') {
        problems.push(`${where}: ${agentError(item.error, { toolName: t.tool, secrets: [settings.key, ...Object.values(values)] }).message}`);
        result = 'error';
        break;
      }
      if (isPlainObject(item.value) && typeof item.value['result'] === 'boolean') result = item.value['result'];
    }
    if (result === false) problems.push(`${where}: the plugin refused the credentials (its own validation, run by the daemon)`);
    if (result === undefined) problems.push(`${where}: the daemon answered without a result`);
  }
  return problems;
}
