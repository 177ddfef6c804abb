import { rootCertificates } from 'node:tls';
import type * as OAuth from 'oauth4webapi';
import { AbortedError, ConfigError, errorMessage } from '../errors.js';
import { isLoopback } from '../net/loopback.js';
import { redact } from '../redact.js';
import type { OAuth2ClientCredentials } from './oauth2-credentials-file.js';
import { OAuth2TokenError } from './oauth2-token-error.js';

type OAuthModule = typeof OAuth;
type HttpOptions = OAuth.HttpRequestOptions<'GET'> & OAuth.HttpRequestOptions<'POST', URLSearchParams>;
type Fetch = (url: string, init: OAuth.CustomFetchOptions<string, URLSearchParams | undefined>) => Promise<Response>;

/**
 * An issuer URL as OAuth allows it: https, or plain http to a loopback host only (RFC 8252's
 * rule for native apps, and what a test issuer on 127.0.0.1 needs). Throws ConfigError.
 */
export function parseIssuerUrl(text: string, where: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError([`${where}: "${text}" is not a URL`]);
  }
  if (url.username !== '' || url.password !== '') throw new ConfigError([`${where}: the issuer URL must not hold a user name or password`]);
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return url;
  if (url.protocol === 'http:') {
    throw new ConfigError([
      `${where}: ${url.href} is plain http to a host beyond loopback; an OAuth2 issuer must be https (http is accepted for 127.0.0.0/8, ::1 and localhost only)`,
    ]);
  }
  throw new ConfigError([`${where}: ${url.href} is not an https URL`]);
}

export interface OAuth2IssuerClientOptions {
  /** Sent as the `audience` form parameter, as Pulsar's OAuth2 clients send it. */
  readonly audience?: string | undefined;
  /** Sent as `scope` when set. */
  readonly scope?: string | undefined;
  /** PEM CAs trusted besides the system's, for an issuer behind a private CA. */
  readonly ca?: string | undefined;
}

export interface IssuedToken {
  readonly accessToken: string;
  /** From `expires_in`, else from the JWT's `exp`; undefined when the issuer says neither. */
  readonly lifetimeMs: number | undefined;
}

/** Seconds until a JWT's `exp`, read (not verified: the broker verifies) to learn its lifetime. */
function jwtLifetimeMs(token: string): number | undefined {
  try {
    const payload: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const exp = (payload as { exp?: unknown } | null)?.exp;
    return typeof exp === 'number' ? exp * 1000 - Date.now() : undefined;
  } catch {
    return undefined;
  }
}

/** A fetch Response, Node's or undici's package's (a class of its own, so not `instanceof Response`). */
function isResponse(value: unknown): value is Response {
  return typeof value === 'object' && value !== null && typeof (value as Response).status === 'number' && typeof (value as Response).url === 'string';
}

/** A TLS failure to verify the issuer's certificate: settings to fix, not an outage to wait out. */
const CERTIFICATE_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

/**
 * One client-credentials token request, done by panva's oauth4webapi (imported at first use:
 * a worker without OAuth2 never loads it): the issuer's metadata from
 * `/.well-known/openid-configuration` (RFC 8414's `/.well-known/oauth-authorization-server`
 * when that is 404), kept until a request fails, then the grant at its token endpoint.
 */
export class OAuth2IssuerClient {
  #metadata: { readonly issuer: string; readonly as: OAuth.AuthorizationServer } | undefined;
  #fetch: Promise<Fetch | undefined> | undefined;
  #closeAgent: (() => Promise<void>) | undefined;

  constructor(private readonly options: OAuth2IssuerClientOptions) {}

  /** Throws OAuth2TokenError (retriable or not), or AbortedError when `signal` aborts for a reason other than a timeout. */
  async requestToken(issuer: URL, credentials: OAuth2ClientCredentials, signal: AbortSignal): Promise<IssuedToken> {
    try {
      const oauth = await import('oauth4webapi');
      const http = await this.#httpOptions(oauth, issuer, signal);
      const as = await this.#discover(oauth, issuer, http);
      const client: OAuth.Client = { client_id: credentials.clientId };
      const parameters = new URLSearchParams();
      if (this.options.audience) parameters.set('audience', this.options.audience);
      if (this.options.scope) parameters.set('scope', this.options.scope);
      const response = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretPost(credentials.clientSecret), parameters, http);
      const result = await oauth.processClientCredentialsResponse(as, client, response);
      const lifetimeMs = result.expires_in !== undefined ? result.expires_in * 1000 : jwtLifetimeMs(result.access_token);
      return { accessToken: result.access_token, lifetimeMs };
    } catch (err) {
      // The next request discovers again: the issuer may have moved its endpoints.
      this.#metadata = undefined;
      throw await this.#tokenError(err, issuer, credentials, signal);
    }
  }

  async close(): Promise<void> {
    await this.#closeAgent?.();
  }

  async #httpOptions(oauth: OAuthModule, issuer: URL, signal: AbortSignal): Promise<HttpOptions> {
    const customFetch = await (this.#fetch ??= this.#makeFetch());
    // oauth4webapi refuses http unless told; parseIssuerUrl allowed it for loopback only.
    const options: HttpOptions = { signal, [oauth.allowInsecureRequests]: issuer.protocol === 'http:' };
    if (customFetch) options[oauth.customFetch] = customFetch;
    return options;
  }

  /** undici's fetch through an Agent trusting the system's CAs and the given ones; Node's own fetch when none is given. */
  async #makeFetch(): Promise<Fetch | undefined> {
    if (this.options.ca === undefined) return undefined;
    const { Agent, fetch } = await import('undici');
    const agent = new Agent({ connect: { ca: [...rootCertificates, this.options.ca] } });
    this.#closeAgent = () => agent.close();
    return async (url, init) => await fetch(url, { ...init, dispatcher: agent });
  }

  async #discover(oauth: OAuthModule, issuer: URL, http: OAuth.HttpRequestOptions<'GET'>): Promise<OAuth.AuthorizationServer> {
    if (this.#metadata?.issuer === issuer.href) return this.#metadata.as;
    let response = await oauth.discoveryRequest(issuer, { ...http, algorithm: 'oidc' });
    if (response.status === 404) {
      await response.body?.cancel();
      response = await oauth.discoveryRequest(issuer, { ...http, algorithm: 'oauth2' });
    }
    const as = await oauth.processDiscoveryResponse(await expectedIssuer(issuer, response), response);
    const tokenEndpoint = typeof as.token_endpoint === 'string' && URL.canParse(as.token_endpoint) ? new URL(as.token_endpoint) : undefined;
    if (!tokenEndpoint) throw new Error("the issuer's metadata names no token_endpoint");
    // A loopback issuer over http must not send the secret in clear beyond loopback.
    if (tokenEndpoint.protocol === 'http:' && !isLoopback(tokenEndpoint.hostname)) {
      throw new Error(`the issuer's token_endpoint ${tokenEndpoint.href} is plain http beyond loopback`);
    }
    this.#metadata = { issuer: issuer.href, as };
    return as;
  }

  async #tokenError(err: unknown, issuer: URL, credentials: OAuth2ClientCredentials, signal: AbortSignal): Promise<Error> {
    if (signal.aborted && (signal.reason as Error | undefined)?.name !== 'TimeoutError')
      return new AbortedError('the OAuth2 token request was aborted', { cause: signal.reason });
    const oauth = await import('oauth4webapi');
    const details = { issuerUrl: issuer.href, clientId: credentials.clientId };
    let reason: string;
    let retriable: boolean;
    let status: number | undefined;
    let oauthError: string | undefined;
    if (signal.aborted) {
      reason = 'the issuer did not answer in time';
      retriable = true;
    } else if (err instanceof oauth.ResponseBodyError) {
      ({ status, error: oauthError } = err);
      reason = `the issuer refused it (HTTP ${status}): ${oauthError}${err.error_description ? ` (${err.error_description})` : ''}`;
      retriable = status >= 500 || status === 429;
    } else if (err instanceof oauth.WWWAuthenticateChallengeError) {
      status = err.status;
      oauthError = err.cause[0]?.parameters.error;
      reason = `the issuer refused it (HTTP ${status}, WWW-Authenticate ${err.cause[0]?.scheme ?? ''}${oauthError ? ` error=${oauthError}` : ''})`;
      retriable = status >= 500 || status === 429;
    } else if (err instanceof oauth.OperationProcessingError && isResponse(err.cause)) {
      status = err.cause.status;
      reason = `the issuer answered HTTP ${status} at ${new URL(err.cause.url || issuer.href).pathname}`;
      retriable = status >= 500 || status === 429;
    } else if (err instanceof TypeError && err.cause instanceof Error) {
      // fetch's "fetch failed", the network error in its cause.
      const code = (err.cause as NodeJS.ErrnoException).code ?? '';
      reason = `cannot reach the issuer: ${errorMessage(err.cause)}`;
      retriable = !CERTIFICATE_ERROR.test(code);
      if (!retriable) reason += ' (is the issuer behind a private CA? give its certificate as the trusted CA)';
    } else {
      // The answer is not what OAuth specifies (an issuer mismatch, no token endpoint...): settings or issuer to fix.
      reason = errorMessage(err);
      retriable = false;
    }
    // The reason may quote the issuer; should it echo what it was sent, the secret is masked.
    const message = `cannot get an OAuth2 token from ${issuer.href} for client "${credentials.clientId}": ${redact(reason, [credentials.clientSecret])}`;
    return new OAuth2TokenError(message, { ...details, status, oauthError }, { cause: err, retriable });
  }
}

/**
 * The issuer the metadata must name: the configured one, or the metadata's own when the two
 * differ by a trailing slash only (`https://idp/realms/x/` configured, `https://idp/realms/x`
 * served: both find the same document, and Pulsar's clients do not compare them at all).
 */
async function expectedIssuer(issuer: URL, response: Response): Promise<URL> {
  const named = await response
    .clone()
    .json()
    .then((body: unknown) => (body as { issuer?: unknown } | null)?.issuer)
    .catch(() => undefined);
  if (typeof named !== 'string' || !URL.canParse(named)) return issuer;
  const trim = (href: string): string => href.replace(/\/$/, '');
  return trim(new URL(named).href) === trim(issuer.href) ? new URL(named) : issuer;
}
