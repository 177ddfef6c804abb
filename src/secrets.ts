import { readFileSync } from 'node:fs';

/**
 * Credentials belong to the worker: resolved from its environment or a secrets file,
 * referenced by name from descriptors, never taken from a request.
 * A reference is `env:NAME` or `file:<key>` (a key of the JSON secrets file).
 */
export interface Secrets {
  resolve(ref: string): string | undefined;
  /** Every value known, for redaction. */
  values(): readonly string[];
}

export function loadSecrets(env: NodeJS.ProcessEnv, secretsFile?: string): Secrets {
  const fromFile: Record<string, string> = {};
  if (secretsFile) {
    const parsed = JSON.parse(readFileSync(secretsFile, 'utf8')) as Record<string, unknown>;
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') fromFile[k] = v;
  }
  const used = new Set<string>();
  return {
    resolve(ref) {
      let v: string | undefined;
      // Names come from descriptors: `constructor` must not find Object's.
      const name = ref.slice(ref.indexOf(':') + 1);
      if (ref.startsWith('env:')) v = Object.hasOwn(env, name) ? env[name] : undefined;
      else if (ref.startsWith('file:')) v = Object.hasOwn(fromFile, name) ? fromFile[name] : undefined;
      if (v) used.add(v);
      return v;
    },
    values: () => [...used, ...Object.values(fromFile)],
  };
}
