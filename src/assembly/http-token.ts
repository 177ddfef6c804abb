import { ConfigError } from '../errors.js';
import type { Secrets } from '../secrets.js';
import type { Settings } from '../settings.js';

/**
 * The bearer token the HTTP surfaces require (TOOLWIRE_HTTP_TOKEN, a secret reference), or
 * none. A reference that does not resolve is a ConfigError: a surface must not open unguarded.
 */
export function httpToken(settings: Settings, secrets: Secrets): string | undefined {
  if (!settings.httpToken) return undefined;
  const token = secrets.resolveOwn(settings.httpToken);
  if (!token) throw new ConfigError([`TOOLWIRE_HTTP_TOKEN: the reference ${settings.httpToken} does not resolve`]);
  return token;
}
