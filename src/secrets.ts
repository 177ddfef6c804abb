import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';
import { nameMatcher, splitList } from './policy/name-patterns.js';

/**
 * Credentials belong to the worker: resolved from its environment or a secrets file,
 * referenced by name from descriptors, never taken from a request.
 * A reference is `env:NAME` or `file:<key>` (a key of the JSON secrets file).
 *
 * Which ones a descriptor may name is the operator's call, since whoever writes config can
 * send what a reference resolves to wherever its descriptor points:
 * - `TOOLWIRE_SECRET_ENV` lists the variables (`NAME`, `PREFIX*`, comma-separated); unset, any.
 * - `TOOLWIRE_SECRET_FILE_KEYS` lists the keys of the secrets file the same way; unset, any.
 * Either way the worker's own (WORKER_OWN_ENV, the names DIFY_SLIM_ENV hands to slim, and
 * whatever one of its own settings refers to, as TOOLWIRE_HTTP_TOKEN=file:http-token does)
 * resolve for a descriptor only when the list names them in full, not through a pattern.
 */
export interface Secrets {
  /** A descriptor's reference; undefined when unknown or not allowed. */
  resolve(ref: string): string | undefined;
  /** True when `ref` names a variable or key descriptors may not name. */
  refused(ref: string): boolean;
  /** One of the worker's own settings (TOOLWIRE_HTTP_TOKEN): not limited by the lists. */
  resolveOwn(ref: string): string | undefined;
  /** Every value known, for redaction. */
  values(): readonly string[];
}

/**
 * The worker's own variables: its settings and credentials (the broker token, the daemon
 * keys, the plugins' settings), the telemetry exporter's (OTLP headers carry credentials),
 * Node's, proxies (their URLs may carry a password), and the usual names of cloud and
 * cluster credentials.
 */
export const WORKER_OWN_ENV: readonly string[] = [
  'PULSAR_*',
  'TOOLWIRE_*',
  'DIFY_*',
  'SLIM_*',
  'MCP_*',
  'OPENAPI_*',
  'OTEL_*',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'NODE_*',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'AWS_*',
  'AZURE_*',
  'ARM_*',
  'GOOGLE_*',
  'GCLOUD_*',
  'GCP_*',
  'CLOUDSDK_*',
  'OCI_*',
  'ALIBABA_CLOUD_*',
  'ALICLOUD_*',
  'DIGITALOCEAN_*',
  'VAULT_*',
  'KUBECONFIG',
  'KUBERNETES_*',
];

/** The setting that decides whether descriptors may use `ref`. */
export function secretSetting(ref: string): 'TOOLWIRE_SECRET_ENV' | 'TOOLWIRE_SECRET_FILE_KEYS' {
  return ref.startsWith('file:') ? 'TOOLWIRE_SECRET_FILE_KEYS' : 'TOOLWIRE_SECRET_ENV';
}

/** May a descriptor name it? The list when set (else anything), and the worker's own only by full name. */
function namePolicy(setting: string | undefined, own: (name: string) => boolean): (name: string) => boolean {
  const listed = setting === undefined || setting.trim() === '' ? undefined : splitList(setting);
  const inList = listed ? nameMatcher(listed) : () => true;
  const named = new Set(listed?.filter((pattern) => !pattern.endsWith('*')));
  return (name) => inList(name) && (!own(name) || named.has(name));
}

/** Whether a descriptor may name environment variable `name`, by TOOLWIRE_SECRET_ENV and the worker's own names in `env`. */
export function envNamePolicy(env: Readonly<Record<string, string | undefined>>): (name: string) => boolean {
  const { envNames } = ownReferences(env);
  const own = nameMatcher([...WORKER_OWN_ENV, ...splitList(env['DIFY_SLIM_ENV'] ?? '')]);
  return namePolicy(env['TOOLWIRE_SECRET_ENV'], (name) => own(name) || envNames.has(name));
}

/** What the worker's own variables refer to (TOOLWIRE_HTTP_TOKEN=env:GATEWAY_TOKEN, DIFY_DAEMON_KEY=file:daemon): its own too. */
function ownReferences(env: Readonly<Record<string, string | undefined>>): { envNames: Set<string>; fileKeys: Set<string> } {
  const own = nameMatcher(WORKER_OWN_ENV);
  const envNames = new Set<string>();
  const fileKeys = new Set<string>();
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || !own(k)) continue;
    for (const ref of splitList(v)) {
      if (ref.startsWith('env:')) envNames.add(ref.slice('env:'.length));
      else if (ref.startsWith('file:')) fileKeys.add(ref.slice('file:'.length));
    }
  }
  return { envNames, fileKeys };
}

export function loadSecrets(env: NodeJS.ProcessEnv, secretsFile?: string): Secrets {
  const fromFile: Record<string, string> = {};
  if (secretsFile) {
    const parsed = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, unknown>;
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') fromFile[k] = v;
  }
  const envAllowed = envNamePolicy(env);
  const { fileKeys } = ownReferences(env);
  const keyAllowed = namePolicy(env['TOOLWIRE_SECRET_FILE_KEYS'], (key) => fileKeys.has(key));
  const allowed = (ref: string): boolean => {
    const name = ref.slice(ref.indexOf(':') + 1);
    return ref.startsWith('env:') ? envAllowed(name) : ref.startsWith('file:') ? keyAllowed(name) : false;
  };
  const used = new Set<string>();
  const lookup = (ref: string, limited: boolean): string | undefined => {
    let v: string | undefined;
    // Names come from descriptors: `constructor` must not find Object's.
    const name = ref.slice(ref.indexOf(':') + 1);
    if (limited && !allowed(ref)) v = undefined;
    else if (ref.startsWith('env:')) v = Object.hasOwn(env, name) ? env[name] : undefined;
    else if (ref.startsWith('file:')) v = Object.hasOwn(fromFile, name) ? fromFile[name] : undefined;
    if (v) used.add(v);
    return v;
  };
  return {
    resolve: (ref) => lookup(ref, true),
    refused: (ref) => (ref.startsWith('env:') || ref.startsWith('file:')) && !allowed(ref),
    resolveOwn: (ref) => lookup(ref, false),
    values: () => [...used, ...Object.values(fromFile)],
  };
}

/** Why a descriptor's reference gave nothing, for its error message. */
export function unresolvedReason(ref: string, secrets: Secrets): string {
  if (!secrets.refused(ref)) return `${ref} does not resolve on this worker`;
  return `${ref} names a ${ref.startsWith('file:') ? 'key' : 'variable'} ${secretSetting(ref)} does not allow descriptors to name`;
}

const REF = /^(env|file):/;

/** A descriptor value that may be a secret reference: resolved on this worker, else taken as literal text. */
export function resolveDescriptorValue(value: string, what: string, secrets: Secrets): string {
  if (!REF.test(value)) return value;
  const v = secrets.resolve(value);
  if (v === undefined) throw new ConfigError([`${what}: the secret reference ${unresolvedReason(value, secrets)}`]);
  return v;
}
