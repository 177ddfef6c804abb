import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import { abortable } from '../async/abortable.js';
import { Backoff, type BackoffOptions } from '../async/backoff.js';
import { AbortedError, ConfigError, errorMessage } from '../errors.js';
import { readOAuth2CredentialsFile } from './oauth2-credentials-file.js';
import { OAuth2IssuerClient, parseIssuerUrl } from './oauth2-issuer-client.js';
import type { TokenSource } from '../transport/token-source.js';

export interface OAuth2TokenSourceOptions {
  /** The issuer (https, or http on loopback). When unset, the credentials file's `issuer_url` is used. */
  readonly issuerUrl?: string | undefined;
  /** Sent as the `audience` form parameter, as Pulsar's OAuth2 clients send it. */
  readonly audience?: string | undefined;
  /** Sent as `scope` when set. */
  readonly scope?: string | undefined;
  /** Pulsar's credentials file: `{"type":"client_credentials","client_id","client_secret","issuer_url"?}`; read at each request. */
  readonly credentialsFile: string;
  readonly log: Logger;
  /**
   * A token is renewed when less than this is left of it. Default: 10% of its lifetime, at
   * most 60 s, at least 3 s (or half the lifetime of a shorter token).
   */
  readonly refreshMarginMs?: number | undefined;
  /** PEM CA certificate(s) to trust besides the system's, for an issuer behind a private CA. */
  readonly ca?: string | undefined;
  /** Limit of one issuer call (discovery, token); default 10 s. */
  readonly requestTimeoutMs?: number | undefined;
  /** Delays between retries of a failed background refresh; default 1 s doubling to 60 s. */
  readonly retry?: BackoffOptions | undefined;
}

interface CachedToken {
  readonly accessToken: string;
  readonly clientId: string;
  /** performance.now() times: the request was sent at `fetchedAt`, so these err early. */
  readonly fetchedAt: number;
  readonly expiresAt: number;
  readonly marginMs: number;
}

/** A token the issuer gave no lifetime for is renewed as if it had this one. */
const UNKNOWN_LIFETIME_MS = 3_600_000;
/** A token with less than this left is not handed out: it might expire on its way to the broker. */
const EXPIRY_SLACK_MS = 1_000;
/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function defaultMarginMs(lifetimeMs: number): number {
  return Math.max(Math.min(60_000, lifetimeMs * 0.1), Math.min(3_000, lifetimeMs / 2));
}

/**
 * OAuth2 client credentials for the broker, as Pulsar's own clients get them: an access token
 * from the issuer's token endpoint, kept while it is valid. It is renewed on a timer at 80%
 * of its lifetime (sooner when the margin asks), so a connect never waits on the issuer;
 * callers that find no valid token share one request. When a renewal fails, the old token is
 * served while it lasts and the renewal retried with backoff; with no valid token left,
 * `token()` rejects with the request's OAuth2TokenError (retriable when the issuer could not
 * be reached or answered 5xx, not when it refused the client), or ConfigError for the file.
 */
export class OAuth2TokenSource implements TokenSource {
  readonly description: string;
  readonly #options: OAuth2TokenSourceOptions;
  readonly #issuer: URL | undefined;
  readonly #client: OAuth2IssuerClient;
  readonly #closing = new AbortController();
  readonly #backoff: Backoff;
  #current: CachedToken | undefined;
  #inflight: Promise<CachedToken> | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Set from the first failed request to the next success: one warn line, one info line per outage. */
  #failingSince: number | undefined;

  /** Throws ConfigError for an issuer URL that is not https (or http on loopback), or a CA that is not PEM. */
  constructor(options: OAuth2TokenSourceOptions) {
    this.#options = options;
    this.#issuer = options.issuerUrl === undefined ? undefined : parseIssuerUrl(options.issuerUrl, 'OAuth2 issuer URL');
    if (options.ca !== undefined) {
      try {
        if (!options.ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate in it');
        createSecureContext({ ca: options.ca });
      } catch (err) {
        throw new ConfigError([`OAuth2 issuer CA: cannot use it: ${errorMessage(err)}`]);
      }
    }
    this.description = this.#issuer ? `OAuth2 issuer ${this.#issuer.href}` : `OAuth2 issuer of ${options.credentialsFile}`;
    this.#client = new OAuth2IssuerClient({ audience: options.audience, scope: options.scope, ca: options.ca });
    this.#backoff = new Backoff({ initialDelayMs: 1_000, maxDelayMs: 60_000, ...options.retry });
  }

  async token(signal?: AbortSignal): Promise<string> {
    if (this.#closing.signal.aborted) throw new AbortedError(`the token source of ${this.description} is closed`);
    const now = performance.now();
    const current = this.#current;
    if (current && now < current.expiresAt - current.marginMs) return current.accessToken;
    // A renewal is failing and its retry is scheduled: the old token, while it lasts, rather than one more request per caller.
    if (current && this.#failingSince !== undefined && this.#timer && now < current.expiresAt - EXPIRY_SLACK_MS) return current.accessToken;
    return abortable(this.#renewOrKeep(), signal, 'the OAuth2 token request');
  }

  close(): void {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#client.close().catch((err: unknown) => this.#options.log.debug({ err }, 'OAuth2 issuer connections did not close'));
  }

  async #renewOrKeep(): Promise<string> {
    try {
      return (await this.#renew()).accessToken;
    } catch (err) {
      const current = this.#current;
      if (current && performance.now() < current.expiresAt - EXPIRY_SLACK_MS) return current.accessToken;
      throw err;
    }
  }

  /** One request at a time, whoever asks; the caller (token() or the timer) handles its rejection. */
  #renew(): Promise<CachedToken> {
    this.#inflight ??= (async () => {
      try {
        return await this.#request();
      } finally {
        this.#inflight = undefined;
      }
    })();
    return this.#inflight;
  }

  async #request(): Promise<CachedToken> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const { log } = this.#options;
    const fetchedAt = performance.now();
    let clientId: string | undefined;
    try {
      const credentials = await readOAuth2CredentialsFile(this.#options.credentialsFile);
      clientId = credentials.clientId;
      const issuer = this.#issuer ?? this.#fileIssuer(credentials.issuerUrl);
      const issued = await this.#withDeadline((signal) => this.#client.requestToken(issuer, credentials, signal));
      const lifetimeMs = Math.max(1_000, issued.lifetimeMs ?? UNKNOWN_LIFETIME_MS);
      const marginMs = Math.min(this.#options.refreshMarginMs ?? defaultMarginMs(lifetimeMs), lifetimeMs);
      const token: CachedToken = { accessToken: issued.accessToken, clientId, fetchedAt, expiresAt: fetchedAt + lifetimeMs, marginMs };
      if (this.#closing.signal.aborted) return token;
      this.#current = token;
      this.#backoff.reset();
      if (this.#failingSince !== undefined) {
        log.info({ issuer: issuer.href, clientId, failedForMs: Math.round(performance.now() - this.#failingSince) }, 'OAuth2 token renewal recovered');
        this.#failingSince = undefined;
      }
      log.debug({ issuer: issuer.href, clientId, lifetimeMs, givenLifetime: issued.lifetimeMs !== undefined }, 'OAuth2 token obtained');
      this.#schedule(Math.min(lifetimeMs * 0.8, lifetimeMs - marginMs));
      return token;
    } catch (err) {
      if (this.#closing.signal.aborted) throw new AbortedError(`the token source of ${this.description} is closed`, { cause: err });
      const retryInMs = this.#backoff.next();
      if (this.#failingSince === undefined) {
        this.#failingSince = performance.now();
        const current = this.#current;
        const validForMs = current ? Math.max(0, Math.round(current.expiresAt - performance.now())) : 0;
        // The error's message names the issuer and the client, never the secret; later failures of this outage are not logged.
        log.warn({ err, issuer: this.#issuer?.href, clientId, validForMs, retryInMs }, 'OAuth2 token renewal failed; retrying');
      }
      this.#schedule(retryInMs);
      throw err;
    }
  }

  /**
   * Run `call` with a signal that aborts on close() or, with a DOMException named
   * TimeoutError as its reason, at the request deadline. A timer of our own, not
   * AbortSignal.any() over AbortSignal.timeout(): the composite may let the timeout signal be
   * collected before it fires (nodejs/node#57736; a request here outlived its deadline so),
   * and each call would leave a listener on the long-lived close signal.
   */
  async #withDeadline<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = new AbortController();
    const onClose = (): void => deadline.abort(this.#closing.signal.reason);
    this.#closing.signal.addEventListener('abort', onClose, { once: true });
    const timeoutMs = this.#options.requestTimeoutMs ?? 10_000;
    const timer = setTimeout(() => deadline.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    try {
      if (this.#closing.signal.aborted) onClose();
      return await call(deadline.signal);
    } finally {
      clearTimeout(timer);
      this.#closing.signal.removeEventListener('abort', onClose);
    }
  }

  #fileIssuer(issuerUrl: string | undefined): URL {
    const where = `OAuth2 credentials file ${this.#options.credentialsFile}: "issuer_url"`;
    if (issuerUrl === undefined) throw new ConfigError([`${where} is missing, and no issuer URL is configured`]);
    return parseIssuerUrl(issuerUrl, where);
  }

  /** The next renewal, in the background; its failure was logged by #request, so it is only caught here. */
  #schedule(delayMs: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#renew().catch(() => undefined);
      },
      Math.min(MAX_TIMER_MS, Math.max(0, delayMs)),
    );
    this.#timer.unref();
  }
}
