import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Whether a caller's secret is the expected one. Their digests are compared, not the texts:
 * both are 32 bytes whatever the secret's length, so neither the comparison's time nor a
 * length check before it tells a caller how long the secret is, or how much of it was right.
 */
export function sameSecret(given: string, wanted: string): boolean {
  return timingSafeEqual(digest(given), digest(wanted));
}
