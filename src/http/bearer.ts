import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

/**
 * True for the name `localhost` and for a loopback address (127.0.0.0/8, ::1, and IPv4-mapped
 * loopback), parsed as an address: `127.attacker.example` is a name anyone can point anywhere.
 */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.isValid(bare) && ipaddr.process(bare).range() === 'loopback';
}

/** True when the request carries `Authorization: Bearer <token>`, compared in constant time. */
export function hasBearer(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}
