import type { Secrets } from '../../secrets.js';
import { SettingsReader } from '../settings-reader.js';
import { blobSinkFor, type BlobSink } from '../blob-sink.js';

/**
 * Worker settings of the dify-agent plugin (never taken from a request):
 * - `DIFY_AGENT_DAEMON_URL`, `DIFY_AGENT_DAEMON_KEY`, `DIFY_AGENT_TENANT_ID`: toolwire's own plugin
 *   daemon, whose DIFY_INNER_API_URL points at this worker (required). A daemon that a Dify
 *   installation shares will not do: it sends every plugin's callbacks to one inner API.
 * - `DIFY_AGENT_RUNTIME`    `daemon` (default). `slim` is refused: its local mode cannot answer a
 *                           strategy's callbacks, and its remote mode is the daemon again.
 * - `DIFY_INNER_API_HOST`   where the inner API listens (default 127.0.0.1)
 * - `DIFY_INNER_API_PORT`   its port (default 5001, Dify's API port)
 * - `DIFY_INNER_API_KEY`    the key the daemon was given as DIFY_INNER_API_KEY; value or `env:`/`file:` (required)
 * - `DIFY_AGENT_MODEL_URL`  an OpenAI-compatible base URL (…/v1); value or `env:`/`file:` (required)
 * - `DIFY_AGENT_MODEL_KEY`  its API key (Bearer); value or reference (optional: Ollama, llama.cpp need none)
 * - `DIFY_BLOB_DIR`         where files a strategy sends are written, as for dify-daemon; unset: described, not kept
 */
export const DifyAgentSetting = {
  DaemonUrl: 'DIFY_AGENT_DAEMON_URL',
  DaemonKey: 'DIFY_AGENT_DAEMON_KEY',
  TenantId: 'DIFY_AGENT_TENANT_ID',
  Runtime: 'DIFY_AGENT_RUNTIME',
  InnerHost: 'DIFY_INNER_API_HOST',
  InnerPort: 'DIFY_INNER_API_PORT',
  InnerKey: 'DIFY_INNER_API_KEY',
  ModelUrl: 'DIFY_AGENT_MODEL_URL',
  ModelKey: 'DIFY_AGENT_MODEL_KEY',
} as const;

export interface DifyAgentSettings {
  readonly daemon: { readonly url: string; readonly key: string; readonly tenantId: string };
  readonly innerApi: { readonly host: string; readonly port: number; readonly key: string };
  readonly model: { readonly baseUrl: string; readonly key: string | undefined };
  readonly blobSink: BlobSink;
}

/** Why slim's local mode cannot run a strategy (dify-plugin-daemon pkg/slim/local.go at bdb5642a). */
export const SLIM_LOCAL_REFUSAL =
  "slim's local mode cannot run an agent strategy: it handles only the plugin's stream, end and error session messages and closes the plugin's stdin after the request, so the strategy's model and tool calls would never be answered (it would hang until the timeout); run the strategy on a plugin daemon of toolwire's own (DIFY_AGENT_DAEMON_URL)";

export function readDifyAgentSettings(
  settings: Readonly<Record<string, string | undefined>>,
  secrets: Secrets,
): { settings: DifyAgentSettings; problems: string[] } {
  const r = new SettingsReader(settings, secrets);
  const why = 'needed by the dify-agent plugin';
  const runtime = r.oneOf(DifyAgentSetting.Runtime, ['daemon', 'slim'], 'daemon');
  if (runtime === 'slim') {
    r.problems.push(
      r.oneOf('DIFY_SLIM_MODE', ['remote', 'local'], 'remote') === 'local'
        ? `setting ${DifyAgentSetting.Runtime}=slim with DIFY_SLIM_MODE=local: ${SLIM_LOCAL_REFUSAL}`
        : `setting ${DifyAgentSetting.Runtime}=slim: slim's remote mode posts to a daemon; name that daemon in ${DifyAgentSetting.DaemonUrl} with the daemon runtime`,
    );
  }
  const modelUrl = r.secret(DifyAgentSetting.ModelUrl, why).replace(/\/+$/, '');
  if (modelUrl !== '' && !/^https?:\/\//.test(modelUrl)) r.problems.push(`setting ${DifyAgentSetting.ModelUrl}: must be an http(s) URL`);
  const out: DifyAgentSettings = {
    daemon: { url: r.url(DifyAgentSetting.DaemonUrl, why), key: r.secret(DifyAgentSetting.DaemonKey, why), tenantId: r.required(DifyAgentSetting.TenantId, why) },
    innerApi: {
      host: r.optional(DifyAgentSetting.InnerHost) ?? '127.0.0.1',
      port: r.int(DifyAgentSetting.InnerPort, 5001, 0),
      key: r.secret(DifyAgentSetting.InnerKey, why),
    },
    model: { baseUrl: modelUrl, key: r.optional(DifyAgentSetting.ModelKey) === undefined ? undefined : r.secret(DifyAgentSetting.ModelKey, why) },
    blobSink: blobSinkFor(r.optional('DIFY_BLOB_DIR'), settings),
  };
  return { settings: out, problems: r.problems };
}
