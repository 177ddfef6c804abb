import { z } from 'zod';

/** Whether a URL carries a user name or a password (`https://user:pass@host/`). */
export function hasUserinfo(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/**
 * An http(s) URL a descriptor gives. A user name or password in it is refused: a URL is
 * shown and logged where a secret never is (problems, readiness), so credentials go in a
 * secret reference instead. The message does not repeat the URL.
 */
export const httpUrl = z
  .url({ protocol: /^https?$/ })
  .refine(
    (url) => !URL.canParse(url) || !hasUserinfo(new URL(url)),
    'must not hold a user name or password; give credentials as a secret reference (env:NAME or file:key) where the plugin takes them',
  );
