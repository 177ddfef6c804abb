import { AbortedError, UnauthorizedError, UnavailableError, errorMessage, firstIssue } from '../../errors.js';
import { abortError } from '../../async/abort-error.js';
import { resolveDescriptorValue, type Secrets } from '../../secrets.js';
import type { AuthOptions } from './openapi-options.js';
import { tokenErrorReply, tokenReply } from './token-reply.js';

/** A token request, sent through the service's guarded client. */
export type PostForm = (url: string, form: URLSearchParams, headers: Record<string, string>, signal: AbortSignal) => Promise<{ status: number; text: string }>;

/** Wait for a shared promise, or stop waiting when this caller's signal fires; the promise goes on for the others. */
function untilAborted<T>(shared: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void shared.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Client-credentials tokens, fetched once and shared until shortly before they expire. The
 * fetch serves every caller, so it runs on a signal of its own, bounded by `timeoutMs` and by
 * close(): a caller that gives up stops waiting, and the others still get the token.
 */
export class ClientCredentialsToken {
  private cached: { token: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly closing = new AbortController();

  constructor(
    private readonly tokenUrl: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
    private readonly scopes: readonly string[],
    private readonly post: PostForm,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The current token; one fetch serves every call that asks while it runs. */
  get(signal: AbortSignal): Promise<string> {
    if (this.cached && this.now() < this.cached.expiresAt) return Promise.resolve(this.cached.token);
    if (!this.pending) {
      const fetched = this.fetch(AbortSignal.any([this.closing.signal, AbortSignal.timeout(this.timeoutMs)])).finally(() => {
        if (this.pending === fetched) this.pending = undefined;
      });
      // Every caller may have stopped waiting: the outcome is then no one's, and not unhandled.
      fetched.catch(() => undefined);
      this.pending = fetched;
    }
    return untilAborted(this.pending, signal);
  }

  /** The API refused the token: the next call fetches a new one. */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
  }

  /** Ends a fetch in flight (the service is closing). */
  close(): void {
    this.closing.abort(new AbortedError('the service is closing'));
  }

  private async fetch(signal: AbortSignal): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.scopes.length) form.set('scope', this.scopes.join(' '));
    // RFC 6749 §2.3.1: client credentials in HTTP basic, each part form-encoded first.
    const basic = Buffer.from(`${encodeURIComponent(this.clientId)}:${encodeURIComponent(this.clientSecret)}`).toString('base64');
    let res;
    try {
      res = await this.post(this.tokenUrl, form, { authorization: `Basic ${basic}`, accept: 'application/json' }, signal);
    } catch (err) {
      if (this.closing.signal.aborted) throw abortError(this.closing.signal);
      if (signal.aborted) throw new UnavailableError(`the OAuth2 token endpoint did not answer within ${this.timeoutMs} ms`, { cause: err });
      throw new UnavailableError(`the OAuth2 token endpoint cannot be reached: ${errorMessage(err)}`, { cause: err });
    }
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      body = undefined;
    }
    const read = res.status < 400 ? tokenReply.safeParse(body) : undefined;
    if (!read?.success) {
      // Its `error` code (`invalid_client`) says why; some endpoints send one with a 200.
      const refused = tokenErrorReply.safeParse(body);
      const why = refused.success ? refused.data.error : `HTTP ${res.status}`;
      if (res.status >= 500) throw new UnavailableError(`the OAuth2 token endpoint failed: ${why}`);
      if (!read || refused.success) throw new UnauthorizedError(`the OAuth2 token endpoint refused this worker's client credentials: ${why}`);
      const what = body === undefined ? 'a body that is not JSON' : `a reply toolwire cannot read, ${firstIssue(read.error)}`;
      throw new UnauthorizedError(`the OAuth2 token endpoint answered HTTP ${res.status} with ${what}`);
    }
    const { access_token: token, expires_in: lifetimeS = 3600 } = read.data;
    // Renewed a little early, so a token does not expire on its way to the API.
    const marginMs = Math.min(30_000, (lifetimeS * 1000) / 10);
    this.cached = { token, expiresAt: this.now() + Math.max(0, lifetimeS * 1000 - marginMs) };
    return token;
  }
}

/** What a call adds to the request for the service's auth. */
export interface Credentials {
  readonly headers: Record<string, string>;
  readonly query: [string, string][];
  /** The bearer token used, so a 401 can drop it. */
  readonly token?: string;
}

/** The service's auth, with every value resolved from the worker's secrets once. */
export class ServiceAuth {
  private readonly oauth: ClientCredentialsToken | undefined;
  private readonly fixed: Credentials;
  /** Every secret value this auth sends, so error texts can mask them. */
  readonly secretValues: readonly string[];

  /** `tokenTimeoutMs` bounds an OAuth2 token fetch, which no single call owns. */
  constructor(options: AuthOptions, secrets: Secrets, post: PostForm, tokenTimeoutMs: number) {
    const values: string[] = [];
    const secret = (reference: string, what: string): string => {
      const r = resolveDescriptorValue(reference, what, secrets);
      values.push(r);
      return r;
    };
    switch (options.type) {
      case 'none':
        this.fixed = { headers: {}, query: [] };
        break;
      case 'api-key': {
        const key = secret(options.value, 'plugin.auth.value');
        if (options.in === 'query') this.fixed = { headers: {}, query: [[options.name, key]] };
        else {
          // Dify's prefixes: `Bearer <key>`, `Basic <key>`, or the key as it is.
          const text = options.prefix === 'bearer' ? `Bearer ${key}` : options.prefix === 'basic' ? `Basic ${key}` : key;
          this.fixed = { headers: { [options.name.toLowerCase()]: text }, query: [] };
        }
        break;
      }
      case 'basic': {
        const user = resolveDescriptorValue(options.username, 'plugin.auth.username', secrets);
        const pass = secret(options.password, 'plugin.auth.password');
        const encoded = Buffer.from(`${user}:${pass}`).toString('base64');
        values.push(encoded);
        this.fixed = { headers: { authorization: `Basic ${encoded}` }, query: [] };
        break;
      }
      case 'oauth2-client-credentials':
        this.fixed = { headers: {}, query: [] };
        this.oauth = new ClientCredentialsToken(
          options['token-url'],
          resolveDescriptorValue(options['client-id'], 'plugin.auth.client-id', secrets),
          secret(options['client-secret'], 'plugin.auth.client-secret'),
          options.scopes,
          post,
          tokenTimeoutMs,
        );
        break;
    }
    this.secretValues = values;
  }

  async credentials(signal: AbortSignal): Promise<Credentials> {
    if (!this.oauth) return this.fixed;
    const token = await this.oauth.get(signal);
    return { headers: { authorization: `Bearer ${token}` }, query: [], token };
  }

  /** Ends a token fetch in flight. */
  close(): void {
    this.oauth?.close();
  }

  /** A 401 with this token: fetch a new one next time. Returns whether a retry could help. */
  refused(credentials: Credentials): boolean {
    if (!this.oauth || credentials.token === undefined) return false;
    this.oauth.invalidate(credentials.token);
    return true;
  }
}
