/**
 * Where the bearer token sent to the broker comes from. It is asked at every (re)connect and
 * admin call, never cached by the caller, so a rotated file or a refreshed OAuth2 token is
 * what the next connection carries.
 */
export interface TokenSource {
  /** What it is, for logs and errors (a file's path, an issuer's URL); never the token. */
  readonly description: string;
  /** The token to send now. */
  token(signal?: AbortSignal): Promise<string>;
  /** Stop any timer it keeps. Idempotent. */
  close(): void;
}

/** A token given once (a literal, or a reference resolved at start): the same at every connect. */
export function fixedTokens(token: string, description: string): TokenSource {
  return { description, token: () => Promise.resolve(token), close: () => undefined };
}
