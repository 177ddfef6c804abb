import ipaddr from 'ipaddr.js';

/**
 * True for the name `localhost` and for a loopback address (127.0.0.0/8, ::1, and IPv4-mapped
 * loopback), parsed as an address: `127.attacker.example` is a name anyone can point anywhere.
 * A URL's hostname may be given as it is (`[::1]`).
 */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}
