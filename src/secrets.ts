import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';

/**
 * Credentials belong to the worker: resolved from its environment or a secrets file,
 * referenced by name from descriptors, never taken from a request.
 * A reference is `env:NAME` or `file:<key>` (a key of the JSON secrets file).
 *
 * Which environment variables a descriptor may name is the operator's call:
 * `TOOLWIRE_SECRET_ENV` lists names and prefixes (`NAME`, `PREFIX*`, comma-separated). Unset,
 * any variable but the worker's own credentials and settings (`PULSAR_*`, `TOOLWIRE_*`,
 * `DIFY_DAEMON_*`) may be named, so that a descriptor cannot hand the broker token to a
 * third-party plugin.
 */
export interface Secrets {
  /** A descriptor's reference; undefined when unknown or not allowed. */
  resolve(ref: string): string | undefined;
  /** True when `ref` names an environment variable descriptors may not name. */
  refused(ref: string): boolean;
  /** One of the worker's own settings (TOOLWIRE_HTTP_TOKEN): not limited by TOOLWIRE_SECRET_ENV. */
  resolveOwn(ref: string): string | undefined;
  /** Every value known, for redaction. */
  values(): readonly string[];
}

/** The worker's own credentials and settings: never a descriptor's to name unless listed. */
const WORKER_OWN = ['PULSAR_*', 'TOOLWIRE_*', 'DIFY_DAEMON_*'];

function matcher(patterns: readonly string[]): (name: string) => boolean {
  const exact = new Set(patterns.filter((p) => !p.endsWith('*')));
  const prefixes = patterns.filter((p) => p.endsWith('*')).map((p) => p.slice(0, -1));
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p));
}

/** Whether a descriptor may name environment variable `name`, by TOOLWIRE_SECRET_ENV. */
export function envNamePolicy(setting: string | undefined): (name: string) => boolean {
  if (setting === undefined || setting.trim() === '') {
    const own = matcher(WORKER_OWN);
    return (name) => !own(name);
  }
  return matcher(
    setting
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

export function loadSecrets(env: NodeJS.ProcessEnv, secretsFile?: string): Secrets {
  const fromFile: Record<string, string> = {};
  if (secretsFile) {
    const parsed = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, unknown>;
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') fromFile[k] = v;
  }
  const allowed = envNamePolicy(env['TOOLWIRE_SECRET_ENV']);
  const used = new Set<string>();
  const lookup = (ref: string, limited: boolean): string | undefined => {
    let v: string | undefined;
    // Names come from descriptors: `constructor` must not find Object's.
    const name = ref.slice(ref.indexOf(':') + 1);
    if (ref.startsWith('env:')) v = (!limited || allowed(name)) && Object.hasOwn(env, name) ? env[name] : undefined;
    else if (ref.startsWith('file:')) v = Object.hasOwn(fromFile, name) ? fromFile[name] : undefined;
    if (v) used.add(v);
    return v;
  };
  return {
    resolve: (ref) => lookup(ref, true),
    refused: (ref) => ref.startsWith('env:') && !allowed(ref.slice('env:'.length)),
    resolveOwn: (ref) => lookup(ref, false),
    values: () => [...used, ...Object.values(fromFile)],
  };
}

/** Why a descriptor's reference gave nothing, for its error message. */
export function unresolvedReason(ref: string, secrets: Secrets): string {
  return secrets.refused(ref) ? `${ref} names a variable TOOLWIRE_SECRET_ENV does not allow descriptors to name` : `${ref} does not resolve on this worker`;
}

const REF = /^(env|file):/;

/** A descriptor value that may be a secret reference: resolved on this worker, else taken as literal text. */
export function resolveDescriptorValue(value: string, what: string, secrets: Secrets): string {
  if (!REF.test(value)) return value;
  const v = secrets.resolve(value);
  if (v === undefined) throw new ConfigError([`${what}: the secret reference ${unresolvedReason(value, secrets)}`]);
  return v;
}
