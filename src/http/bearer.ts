import type { IncomingMessage } from 'node:http';
import { sameSecret } from '../net/same-secret.js';

/** True when the request carries `Authorization: Bearer <token>`. */
export function hasBearer(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  return header.startsWith('Bearer ') && sameSecret(header.slice('Bearer '.length), token);
}
