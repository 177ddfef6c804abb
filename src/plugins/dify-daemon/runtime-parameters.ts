import { isPlainObject } from '../../plain-object.js';
import { unresolvedReason, type Secrets } from '../../secrets.js';
import { agentError } from '../dify-common/agent-error.js';
import { DifyDaemonClient } from '../dify-common/daemon-client.js';

/**
 * A tool's parameter declarations as the plugin daemon reports them at run time (a provider
 * whose YAML leaves them dynamic), asked with the tool's own credentials.
 */
export async function runtimeParameters(
  daemon: { url: string; key: string; tenantId: string },
  secrets: Secrets,
  target: { pluginId: string; provider: string; tool: string; credentials: Record<string, string> },
  signal: AbortSignal,
): Promise<unknown[]> {
  const { url, key, tenantId } = daemon;
  const creds: Record<string, string> = {};
  for (const [name, ref] of Object.entries(target.credentials)) {
    const v = secrets.resolve(ref);
    if (!v) throw new Error(`credential ${name}: ${unresolvedReason(ref, secrets)}`);
    creds[name] = v;
  }
  const client = new DifyDaemonClient({ url: url.replace(/\/+$/, ''), key, tenantId });
  const provider = target.provider.split('/').pop() ?? target.provider;
  for await (const item of client.getRuntimeParameters(
    target.pluginId,
    { user_id: 'toolwire-import', data: { provider, tool: target.tool, credentials: creds } },
    signal,
  )) {
    if (item.kind === 'error') throw new Error(agentError(item.error, { toolName: target.tool, secrets: [key, ...Object.values(creds)] }).message);
    if (isPlainObject(item.value) && Array.isArray(item.value['parameters'])) return item.value['parameters'] as unknown[];
  }
  throw new Error('the daemon answered without a parameters list');
}
