import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A name lookup: every address a host name resolves to. Injected in tests, so none ever reaches a real resolver. */
export type Resolver = (hostname: string) => Promise<readonly string[]>;

export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((record) => record.address);

/** A CIDR the policy can hold (`10.0.0.0/8`, `::1/128`). */
export function isCidr(text: string): boolean {
  return ipaddr.isValidCIDR(text);
}

/** A URL or an address the policy does not allow; the message says which rule refused it. */
export class AddressRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressRefusedError';
  }
}

export interface AddressPolicy {
  /** Host names a request may go to (`api.example.com`, `*.example.com`); undefined: any host. */
  readonly allowHosts?: readonly string[];
  /**
   * Addresses beyond the public internet (loopback, private, link-local, shared, reserved):
   * refused by default; `true` allows them all, a list of CIDRs allows those only.
   */
  readonly allowPrivate?: boolean | readonly string[];
  /** The setting an operator changes to allow more, named in refusals. */
  readonly allowPrivateSetting?: string;
}

/** A URL's hostname without the brackets of an IPv6 literal. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** IPv4-compatible IPv6 (RFC 4291, deprecated): ipaddr.js counts it as unicast. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
/** NAT64's well-known prefix (RFC 6052); ipaddr.js's `rfc6052` also holds the local-use /48, whose layout differs. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * The IPv4 address an IPv6 address stands for when the packet is translated to it:
 * IPv4-compatible, IPv4-translated (`rfc6145`) and NAT64 addresses end in it. Such an address
 * is judged as that IPv4 address, so `[::7f00:1]` is loopback and a NAT64 path to a public
 * host stays open. Tunnels (6to4, Teredo) are not unpacked: ipaddr.js classes them as ranges
 * of their own, which are refused whole.
 */
function translatedIpv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = ip.range();
  const translated = range === 'rfc6145' || ip.match(NAT64_WELL_KNOWN) || (range === 'unicast' && ip.match(IPV4_COMPATIBLE));
  return translated ? new ipaddr.IPv4(ip.toByteArray().slice(12)) : undefined;
}

function hostMatches(host: string, pattern: string): boolean {
  const p = pattern.toLowerCase();
  if (p.startsWith('*.')) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  return host === p;
}

/**
 * Guards outgoing requests against forgery: the scheme, the host name against an allow-list,
 * and every address the name resolves to against the address policy. The connector checks
 * again at connect time, on the address it then dials, so a name that changes its answer
 * between the check and the connection (DNS rebinding) gains nothing.
 */
export class AddressGuard {
  private readonly allowedRanges: [ipaddr.IPv4 | ipaddr.IPv6, number][];
  private readonly allowAllPrivate: boolean;
  /** checkUrl's verdict by host name ('' = allowed), before any lookup. */
  private readonly hostChecks = new Map<string, string>();

  constructor(
    readonly policy: AddressPolicy,
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.allowAllPrivate = policy.allowPrivate === true;
    // typeof, not Array.isArray, which reads a readonly string[] as any[].
    this.allowedRanges = typeof policy.allowPrivate === 'object' ? policy.allowPrivate.map((cidr) => ipaddr.parseCIDR(cidr)) : [];
  }

  /** Why this host name is refused, or undefined. */
  hostRefusal(hostname: string): string | undefined {
    const host = bareHost(hostname).toLowerCase();
    const allow = this.policy.allowHosts;
    if (allow && !allow.some((pattern) => hostMatches(host, pattern))) return `host ${host} is not among the allowed hosts (${allow.join(', ')})`;
    return undefined;
  }

  /** Why this address is refused (`a linkLocal address`), or undefined. */
  refusedKind(address: string): string | undefined {
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
      ip = ipaddr.process(address);
    } catch {
      return 'not an IP address';
    }
    const carried = ip.kind() === 'ipv6' ? translatedIpv4(ip as ipaddr.IPv6) : undefined;
    const judged = carried ?? ip;
    const range = judged.range();
    if (range === 'unicast' || this.allowAllPrivate) return undefined;
    if (this.allowedRanges.some(([net, bits]) => [ip, judged].some((candidate) => net.kind() === candidate.kind() && candidate.match(net, bits))))
      return undefined;
    return carried ? `a ${range} address (${carried.toString()}, carried in ${ip.toString()})` : `a ${range} address`;
  }

  /** Why this address is refused, or undefined. */
  addressRefusal(address: string, host?: string): string | undefined {
    const kind = this.refusedKind(address);
    if (!kind) return undefined;
    return `${host && host !== address ? `host ${host} resolves to ${address}, ` : `${address} is `}${kind}, which is not allowed (see ${this.policy.allowPrivateSetting ?? 'allow-private'})`;
  }

  /** The addresses of a host, every one of them allowed; throws AddressRefusedError otherwise. */
  async addresses(hostname: string): Promise<readonly string[]> {
    const host = bareHost(hostname);
    const refusedHost = this.hostRefusal(host);
    if (refusedHost) throw new AddressRefusedError(refusedHost);
    const addresses = isIP(host) ? [host] : await this.resolve(host);
    if (addresses.length === 0) throw new AddressRefusedError(`host ${host} has no address`);
    // All of them: a name with one public and one private answer is refused, not raced.
    for (const a of addresses) {
      const refused = this.addressRefusal(a, host);
      if (refused) throw new AddressRefusedError(refused);
    }
    return addresses;
  }

  /** Checks a URL's scheme and host (and a literal address) before anything is sent; returns it parsed. */
  checkUrl(url: string | URL): URL {
    let u: URL;
    try {
      u = url instanceof URL ? url : new URL(url);
    } catch {
      throw new AddressRefusedError(`not an absolute URL: ${String(url).slice(0, 200)}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AddressRefusedError(`only http and https URLs are allowed, not ${u.protocol}`);
    if (u.username || u.password) throw new AddressRefusedError('URLs with credentials in them are not allowed');
    let refused = this.hostChecks.get(u.hostname);
    if (refused === undefined) {
      const host = bareHost(u.hostname);
      refused = this.hostRefusal(host) ?? (isIP(host) ? this.addressRefusal(host) : undefined) ?? '';
      // A name's verdict depends on the policy alone; kept for the few hosts a service calls.
      if (this.hostChecks.size >= 64) this.hostChecks.clear();
      this.hostChecks.set(u.hostname, refused);
    }
    if (refused) throw new AddressRefusedError(refused);
    return u;
  }

  /** checkUrl, and every address the host resolves to: for a URL someone else will fetch. */
  async checkUrlResolved(url: string | URL): Promise<URL> {
    const u = this.checkUrl(url);
    await this.addresses(u.hostname);
    return u;
  }
}
