import { SLIM_LOCAL_REFUSAL } from './slim-refusal.js';
import type { Secrets } from '../../secrets.js';
import { parseTopic } from '../../transport/topic-name.js';
import { SettingsReader } from '../settings-reader.js';
import { blobSinkFor, type BlobSink } from '../blob-sink.js';
import { innerApiKeyProblem } from './inner-api-server.js';
import { DifyAgentSetting } from './agent-kind.js';

/** Where a strategy's model rounds go. */
export const AgentModelKind = {
  OpenAi: 'openai',
  TextCompletion: 'text-completion',
} as const;
export type AgentModelKind = (typeof AgentModelKind)[keyof typeof AgentModelKind];

/**
 * TrustGraph's text-completion queues for flow `default` in workspace `default`: its flow
 * blueprints name them `request:tg:text-completion:{workspace}:{id}` and
 * `response:tg:text-completion:{workspace}:{id}` (trustgraph-templates 2.8
 * `flows/llm-services.jsonnet`; the flow service fills them in, trustgraph-flow 2.11.1
 * `trustgraph/flow/service/flow.py`), which Pulsar knows as these.
 */
export const DEFAULT_TEXT_COMPLETION_QUEUES = {
  request: 'non-persistent://tg/request/text-completion:default:default',
  response: 'non-persistent://tg/response/text-completion:default:default',
} as const;

export type AgentModelSettings =
  | { readonly kind: typeof AgentModelKind.OpenAi; readonly baseUrl: string; readonly key: string | undefined }
  | { readonly kind: typeof AgentModelKind.TextCompletion; readonly request: string; readonly response: string };

/**
 * Worker settings of the dify-agent plugin (never taken from a request):
 * - `DIFY_AGENT_DAEMON_URL`, `DIFY_AGENT_DAEMON_KEY`, `DIFY_AGENT_TENANT_ID`: toolwire's own plugin
 *   daemon, whose DIFY_INNER_API_URL points at this worker (required). A daemon that a Dify
 *   installation shares will not do: it sends every plugin's callbacks to one inner API.
 * - `DIFY_AGENT_RUNTIME`    `daemon` (default). `slim` is refused: its local mode cannot answer a
 *                           strategy's callbacks, and its remote mode is the daemon again.
 * - `DIFY_INNER_API_HOST`   where the inner API listens (default 127.0.0.1)
 * - `DIFY_INNER_API_PORT`   its port (default 5001, Dify's API port)
 * - `DIFY_INNER_API_KEY`    the key the daemon was given as DIFY_INNER_API_KEY; value or `env:`/`file:` (required,
 *                           at least 16 characters)
 * - `DIFY_AGENT_MODEL`      `openai` (default): an OpenAI-compatible endpoint; `text-completion`:
 *                           TrustGraph's text-completion service on the broker (text-only strategies)
 * - `DIFY_AGENT_MODEL_URL`  an OpenAI-compatible base URL (…/v1); value or `env:`/`file:` (required with `openai`)
 * - `DIFY_AGENT_MODEL_KEY`  its API key (Bearer); value or reference (optional: Ollama, llama.cpp need none)
 * - `DIFY_AGENT_TEXT_COMPLETION_REQUEST_QUEUE` / `…_RESPONSE_QUEUE`  with `text-completion`: the
 *                           flow's queues, full Pulsar names or TrustGraph's `request:tg:…` form
 *                           (default: those of flow `default` in workspace `default`)
 * - `DIFY_BLOB_DIR`         where files a strategy sends are written, as for dify-daemon; unset: described, not kept
 */
export interface DifyAgentSettings {
  readonly daemon: { readonly url: string; readonly key: string; readonly tenantId: string };
  readonly innerApi: { readonly host: string; readonly port: number; readonly key: string };
  readonly model: AgentModelSettings;
  readonly blobSink: BlobSink;
}

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
  const model = readModel(r, why);
  const out: DifyAgentSettings = {
    daemon: {
      url: r.url(DifyAgentSetting.DaemonUrl, why),
      key: r.secret(DifyAgentSetting.DaemonKey, why),
      tenantId: r.required(DifyAgentSetting.TenantId, why),
    },
    innerApi: {
      host: r.optional(DifyAgentSetting.InnerHost) ?? '127.0.0.1',
      port: r.int(DifyAgentSetting.InnerPort, 5001, 0),
      key: innerApiKey(r, why),
    },
    model,
    blobSink: blobSinkFor(r.optional('DIFY_BLOB_DIR'), settings),
  };
  return { settings: out, problems: r.problems };
}

/** The inner API's key, refused when short enough to guess (an unset one is already a problem). */
function innerApiKey(reader: SettingsReader, why: string): string {
  const key = reader.secret(DifyAgentSetting.InnerKey, why);
  const problem = key === '' ? undefined : innerApiKeyProblem(key);
  if (problem) reader.problems.push(problem);
  return key;
}

function readModel(reader: SettingsReader, why: string): AgentModelSettings {
  const kind = reader.oneOf(DifyAgentSetting.Model, Object.values(AgentModelKind), AgentModelKind.OpenAi);
  if (kind === AgentModelKind.TextCompletion) {
    const queue = (key: string, fallback: string): string => {
      const given = reader.optional(key);
      if (given === undefined) return fallback;
      const t = parseTopic(given);
      if ('error' in t) reader.problems.push(`setting ${key}: ${t.error}`);
      return 'error' in t ? fallback : t.full;
    };
    return {
      kind,
      request: queue(DifyAgentSetting.TextCompletionRequestQueue, DEFAULT_TEXT_COMPLETION_QUEUES.request),
      response: queue(DifyAgentSetting.TextCompletionResponseQueue, DEFAULT_TEXT_COMPLETION_QUEUES.response),
    };
  }
  const baseUrl = reader.secret(DifyAgentSetting.ModelUrl, `${why} with ${DifyAgentSetting.Model}=openai`).replace(/\/+$/, '');
  if (baseUrl !== '' && !/^https?:\/\//.test(baseUrl)) reader.problems.push(`setting ${DifyAgentSetting.ModelUrl}: must be an http(s) URL`);
  return { kind, baseUrl, key: reader.optional(DifyAgentSetting.ModelKey) === undefined ? undefined : reader.secret(DifyAgentSetting.ModelKey, why) };
}
