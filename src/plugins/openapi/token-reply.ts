/**
 * An OAuth2 token endpoint's reply (RFC 6749 §5.1 and §5.2), read once where it arrives. The
 * endpoint is another party's server: a reply of the wrong shape is a clear error naming the
 * field, never a token of `undefined` sent on to the API.
 */
import { z } from 'zod';

/** A successful reply: only what toolwire reads is required. */
export const tokenReply = z.object({
  access_token: z.string().min(1),
  // Some endpoints send the lifetime as text ("3600"); RFC 6749 leaves it optional.
  expires_in: z
    .union([z.number(), z.string().regex(/^\d+$/, 'must be a whole number of seconds').transform(Number)])
    .pipe(z.number().nonnegative())
    .optional(),
});
export type TokenReply = z.output<typeof tokenReply>;

/** An error reply: `error` is a code such as `invalid_client` (never the credentials). */
export const tokenErrorReply = z.object({ error: z.string() });
