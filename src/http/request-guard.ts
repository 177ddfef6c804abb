import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import { isLoopback } from '../net/loopback.js';

/** Beyond what a server listens as: the names a proxy in front forwards, the pages allowed to call. */
export interface BrowserPolicy {
  /** Host names (no port) a request's Host may carry besides the listening address's own. */
  readonly allowedHosts: readonly string[];
  /** Origins (`scheme://host[:port]`) whose pages may call, besides the server's own. */
  readonly allowedOrigins: readonly string[];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** `::1` as a URL writes it (`[::1]`); names and IPv4 as they are, lower-cased. */
function urlHostname(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.IPv6.isValid(bare) ? `[${ipaddr.parse(bare).toString()}]` : host.toLowerCase();
}

const isAddress = (hostname: string): boolean => ipaddr.isValid(hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/**
 * What a Host header may be (RFC 9110 7.2): a name or IPv4 address, or an IPv6 address in
 * brackets, then an optional port. Nothing else: the URL parser would read `evil@127.0.0.1`
 * as user info and a loopback host, `127.0.0.1/x` or `127.0.0.1?x` as a path or query.
 */
const HOST_HEADER = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/i;

/**
 * Keeps web pages from driving a local HTTP server. A page elsewhere can send a "simple"
 * cross-site request (a form, a text/plain or no-cors fetch) with no preflight: it carries
 * that page's Origin, so a foreign Origin is refused. DNS rebinding points the attacker's
 * own name at us, so the request is same-origin for the browser but names a foreign Host:
 * the Host must be a name the server answers to. Both are compared by host name, whatever
 * the port: a container's published port or a proxy changes the port, never the name, and
 * rebinding always needs a name of the attacker's. A request without Origin (curl, an SDK,
 * a probe) is not from a page and passes on its Host alone.
 */
export class RequestGuard {
  private readonly anyAddress: boolean;
  private readonly names: ReadonlySet<string>;
  private readonly origins: ReadonlySet<string>;

  /** `listenHost` as given to listen(): a wildcard answers to every address of the machine. */
  constructor(listenHost: string, policy: BrowserPolicy) {
    const bare = listenHost.startsWith('[') ? listenHost.slice(1, -1) : listenHost;
    this.anyAddress = bare === '' || (ipaddr.isValid(bare) && ipaddr.parse(bare).range() === 'unspecified');
    const names = new Set(policy.allowedHosts.map(urlHostname));
    names.add(urlHostname(listenHost));
    if (this.anyAddress || isLoopback(listenHost)) for (const n of LOOPBACK_NAMES) names.add(n);
    this.names = names;
    this.origins = new Set(policy.allowedOrigins.map((origin) => origin.toLowerCase().replace(/\/$/, '')));
  }

  /** Why the request must be refused (answer 403), or undefined when it may go on. */
  refusal(req: IncomingMessage): string | undefined {
    const host = req.headers.host;
    if (!host) return 'a Host header is required';
    if (!HOST_HEADER.test(host)) return `the Host header ${JSON.stringify(host)} is not a host[:port]`;
    let hostname: string;
    try {
      hostname = new URL(`http://${host}`).hostname;
    } catch {
      return `the Host header ${JSON.stringify(host)} is not a host`;
    }
    if (!this.names.has(hostname) && !(this.anyAddress && isAddress(hostname))) {
      return `this server does not answer to the host name ${hostname} (TOOLWIRE_HTTP_ALLOWED_HOSTS names more)`;
    }
    const origin = req.headers.origin;
    if (origin === undefined || this.origins.has(origin.toLowerCase())) return undefined;
    if (sameOrigin(origin, host)) return undefined;
    return `pages from ${origin} may not call this server (TOOLWIRE_HTTP_ALLOWED_ORIGINS names the ones that may)`;
  }
}

/** A page served under the very host:port the request names (its Host was checked first). */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const o = new URL(origin);
    return (o.protocol === 'http:' || o.protocol === 'https:') && o.host === host.toLowerCase();
  } catch {
    return false; // `null` (a sandboxed frame, a file) and anything else that is not a URL
  }
}

/** True when the body is declared JSON (`application/json`, any parameters). */
export function isJsonBody(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  return type !== undefined && type.split(';')[0]!.trim().toLowerCase() === 'application/json';
}
