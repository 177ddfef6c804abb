import { hasUserinfo } from '../net/http-url.js';
import { isSecretRef, type Secrets } from '../secrets.js';
import { parseWholeNumber } from './whole-number.js';

/** Reads worker settings, collecting every problem instead of stopping at the first. */
export class SettingsReader {
  readonly problems: string[] = [];

  constructor(
    private readonly settings: Readonly<Record<string, string | undefined>>,
    private readonly secrets: Secrets,
  ) {}

  optional(key: string): string | undefined {
    const v = this.settings[key]?.trim();
    return v ? v : undefined;
  }

  required(key: string, why: string): string {
    const v = this.optional(key);
    if (v === undefined) this.problems.push(`setting ${key} is not set (${why})`);
    return v ?? '';
  }

  /** A secret may be given as a value or as a reference (`env:NAME`, `file:key`). */
  secret(key: string, why: string): string {
    const v = this.required(key, why);
    if (!isSecretRef(v)) return v;
    // The worker's own setting (the daemon key): not limited by TOOLWIRE_SECRET_ENV.
    const resolved = this.secrets.resolveOwn(v);
    if (!resolved) this.problems.push(`setting ${key}: cannot resolve ${v}`);
    return resolved ?? '';
  }

  url(key: string, why: string): string {
    const v = this.required(key, why);
    if (v === '') return v;
    try {
      const u = new URL(v);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') this.problems.push(`setting ${key}: must be an http(s) URL`);
      if (hasUserinfo(u)) this.problems.push(`setting ${key}: must not hold a user name or password`);
    } catch {
      this.problems.push(`setting ${key}: not a URL`);
    }
    return v.replace(/\/+$/, '');
  }

  /** A whole number, `fallback` when the variable is not there; refused as the core's are (whole-number.ts), a blank included. */
  int(key: string, fallback: number, min: number): number {
    return this.optionalInt(key, min) ?? fallback;
  }

  /** A whole number; undefined when the variable is not there (or refused, with a problem). */
  optionalInt(key: string, min: number): number | undefined {
    const text = this.settings[key];
    if (text === undefined) return undefined;
    const n = parseWholeNumber(text, { min });
    if ('problem' in n) this.problems.push(`setting ${key}: ${n.problem}`);
    return 'value' in n ? n.value : undefined;
  }

  /**
   * A user or group id to run a child as; undefined when unset or empty. Empty counts as unset
   * here alone: the image sets these (Dockerfile), and an environment can only empty them.
   */
  userId(key: string): number | undefined {
    return this.optional(key) === undefined ? undefined : this.optionalInt(key, 0);
  }

  oneOf<T extends string>(key: string, values: readonly T[], fallback: T): T {
    const v = this.optional(key);
    if (v === undefined) return fallback;
    if (!(values as readonly string[]).includes(v)) {
      this.problems.push(`setting ${key}: must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`);
      return fallback;
    }
    return v as T;
  }
}
