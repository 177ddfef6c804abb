/**
 * Why the plugin will not follow a redirect from `from` to `to`, or undefined. A redirect is
 * followed with the service's credentials, so only to the same origin (scheme, host and
 * port), or from http to https on the same host name, which hides what was in the clear
 * before. A step down to http, or to another port or host, is refused rather than followed
 * without credentials: the request itself (its arguments, the service's headers) would go
 * there too, and an API that asks for it is misconfigured or tampered with.
 */
export function redirectRefusal(from: URL, to: URL): string | undefined {
  if (to.origin === from.origin) return undefined;
  if (to.protocol !== 'http:' && to.protocol !== 'https:') return `the API redirected to a ${to.protocol.slice(0, -1)} URL; refused`;
  if (from.protocol === 'https:' && to.protocol === 'http:')
    return `the API redirected from https to http (${to.host}); refused, as the request and its credentials would travel in clear text`;
  if (to.hostname !== from.hostname) return `the API redirected to another host (${to.host}); refused`;
  if (from.protocol === 'http:' && to.protocol === 'https:') return undefined;
  return `the API redirected to another port (${to.host}); refused`;
}
