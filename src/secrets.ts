import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, firstIssue } from './errors.js';
import { ORIGIN_TEXT, type ConfigOrigin } from './policy/config-origin.js';
import { nameMatcher, splitList } from './policy/name-patterns.js';

/**
 * Credentials belong to the worker: resolved from its environment or a secrets file,
 * referenced by name from descriptors, never taken from a request.
 * A reference is `env:NAME` or `file:<key>` (a key of the JSON secrets file).
 *
 * Which ones a descriptor may name is the operator's call, since whoever writes config can
 * send what a reference resolves to wherever its descriptor points:
 * - `TOOLWIRE_SECRET_ENV` lists the variables (`NAME`, `PREFIX*`, comma-separated); unset,
 *   any for the config directory, none for a config service others write (`forOrigin`).
 * - `TOOLWIRE_SECRET_FILE_KEYS` lists the keys of the secrets file the same way.
 * Either way the worker's own (WORKER_OWN_ENV, the names DIFY_SLIM_ENV hands to slim, and
 * whatever one of its own settings refers to, as TOOLWIRE_HTTP_TOKEN=file:http-token does)
 * resolve for a descriptor only when the list names them in full, not through a pattern.
 */
export interface Secrets {
  /** A descriptor's reference; undefined when unknown or not allowed. */
  resolve(ref: string): string | undefined;
  /** True when `ref` names a variable or key descriptors may not name. */
  refused(ref: string): boolean;
  /** Why descriptors may not name `ref`, with the setting that would allow it; undefined when they may. */
  refusal(ref: string): string | undefined;
  /** One of the worker's own settings (TOOLWIRE_HTTP_TOKEN): not limited by the lists. */
  resolveOwn(ref: string): string | undefined;
  /** Every value known, for redaction. */
  values(): readonly string[];
  /**
   * The same secrets as descriptors from `origin` may name them (what `loadSecrets` returns is
   * the config directory's). What each resolves is known to every view, for redaction.
   */
  forOrigin(origin: ConfigOrigin): Secrets;
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

/** Whether a list setting is unset (blank counts as unset), so its origin's default applies. */
const unset = (setting: string | undefined): boolean => setting === undefined || setting.trim() === '';

/**
 * May a descriptor name it? The list when set; unset, anything from the config directory and
 * nothing from a config service, whose writers are not the operator (as for commands). The
 * worker's own only by full name.
 */
function namePolicy(setting: string | undefined, origin: ConfigOrigin, own: (name: string) => boolean): (name: string) => boolean {
  const listed = unset(setting) ? undefined : splitList(setting ?? '');
  if (!listed && origin !== 'directory') return () => false;
  const inList = listed ? nameMatcher(listed) : () => true;
  const named = new Set(listed?.filter((pattern) => !pattern.endsWith('*')));
  return (name) => inList(name) && (!own(name) || named.has(name));
}

/** Whether a descriptor from `origin` may name environment variable `name`, by TOOLWIRE_SECRET_ENV and the worker's own names in `env`. */
export function envNamePolicy(env: Readonly<Record<string, string | undefined>>, origin: ConfigOrigin): (name: string) => boolean {
  const { envNames } = ownReferences(env);
  const own = nameMatcher([...WORKER_OWN_ENV, ...splitList(env['DIFY_SLIM_ENV'] ?? '')]);
  return namePolicy(env['TOOLWIRE_SECRET_ENV'], origin, (name) => own(name) || envNames.has(name));
}

/** Why a descriptor from `origin` may not name `ref`, which its policy refused. */
function refusalText(ref: string, origin: ConfigOrigin, env: Readonly<Record<string, string | undefined>>): string {
  const setting = secretSetting(ref);
  const what = ref.startsWith('file:') ? 'key' : 'variable';
  if (origin === 'directory' || !unset(env[setting])) return `${ref} names a ${what} ${setting} does not allow descriptors to name`;
  const name = ref.slice(ref.indexOf(':') + 1);
  return `${ref} names a ${what} descriptors from ${ORIGIN_TEXT[origin]} may not name: ${setting} is unset, which allows none for this source; add ${name} to ${setting} to allow it`;
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

/** The secrets file: one JSON object of keys to strings. */
const secretsFileSchema = z.record(z.string(), z.string(), { error: 'must be a JSON object of keys to strings' });

/**
 * The secrets file read once, or a ConfigError naming the file and the key that is wrong. JSON's
 * own error would quote the file's text (a secret), so it is not passed on.
 */
function readSecretsFile(path: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw new ConfigError([`TOOLWIRE_SECRETS_FILE ${path}: is not JSON`]);
  }
  const read = secretsFileSchema.safeParse(parsed);
  if (!read.success) throw new ConfigError([`TOOLWIRE_SECRETS_FILE ${path}: ${firstIssue(read.error)}`]);
  return read.data;
}

export function loadSecrets(env: NodeJS.ProcessEnv, secretsFile?: string): Secrets {
  const fromFile = secretsFile ? readSecretsFile(secretsFile) : {};
  const { fileKeys } = ownReferences(env);
  const used = new Set<string>();
  const lookup = (ref: string, allowed: ((ref: string) => boolean) | undefined): string | undefined => {
    let v: string | undefined;
    // Names come from descriptors: `constructor` must not find Object's.
    const name = ref.slice(ref.indexOf(':') + 1);
    if (allowed && !allowed(ref)) v = undefined;
    else if (ref.startsWith('env:')) v = Object.hasOwn(env, name) ? env[name] : undefined;
    else if (ref.startsWith('file:')) v = Object.hasOwn(fromFile, name) ? fromFile[name] : undefined;
    if (v) used.add(v);
    return v;
  };
  const view = (origin: ConfigOrigin): Secrets => {
    const envAllowed = envNamePolicy(env, origin);
    const keyAllowed = namePolicy(env['TOOLWIRE_SECRET_FILE_KEYS'], origin, (key) => fileKeys.has(key));
    const allowed = (ref: string): boolean => {
      const name = ref.slice(ref.indexOf(':') + 1);
      return ref.startsWith('env:') ? envAllowed(name) : ref.startsWith('file:') ? keyAllowed(name) : false;
    };
    const refused = (ref: string): boolean => (ref.startsWith('env:') || ref.startsWith('file:')) && !allowed(ref);
    return {
      resolve: (ref) => lookup(ref, allowed),
      refused,
      refusal: (ref) => (refused(ref) ? refusalText(ref, origin, env) : undefined),
      resolveOwn: (ref) => lookup(ref, undefined),
      values: () => [...used, ...Object.values(fromFile)],
      forOrigin: view,
    };
  };
  return view('directory');
}

/** Why a descriptor's reference gave nothing, for its error message. */
export function unresolvedReason(ref: string, secrets: Secrets): string {
  return secrets.refusal(ref) ?? `${ref} does not resolve on this worker`;
}

const REF = /^(env|file):./;

/** Whether `value` is a secret reference (`env:NAME`, `file:key`) rather than literal text. */
export function isSecretRef(value: string): boolean {
  return REF.test(value);
}

/** A setting or descriptor field that must be a reference: a credential never sits in config as itself. */
export const secretRefSchema = z.string().regex(REF, 'must be a secret reference: env:NAME or file:key');

/** A descriptor value that may be a secret reference: resolved on this worker, else taken as literal text. */
export function resolveDescriptorValue(value: string, what: string, secrets: Secrets): string {
  if (!REF.test(value)) return value;
  const v = secrets.resolve(value);
  if (v === undefined) throw new ConfigError([`${what}: the secret reference ${unresolvedReason(value, secrets)}`]);
  return v;
}
