import ipaddr from 'ipaddr.js';

/**
 * Who a client of `mcp serve --http` is, for the per-client session cap: its remote address.
 * Not the bearer token: there is one token for every client, so it names none. Not a
 * forwarding header: a client writes that itself. An IPv6 client is its /64, the block one
 * host is usually given (it can pick any address in it); an IPv4-mapped address is the IPv4
 * one. Behind a proxy every client is the proxy's address (docs/security.md).
 */
export function clientKey(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || !ipaddr.isValid(remoteAddress)) return 'unknown';
  const address = ipaddr.process(remoteAddress);
  if (address.kind() === 'ipv4') return address.toString();
  const prefix = [...address.toByteArray().slice(0, 8), ...new Array<number>(8).fill(0)];
  return `${ipaddr.fromByteArray(prefix).toString()}/64`;
}
