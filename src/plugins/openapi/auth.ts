import { UnauthorizedError, UnavailableError, errorMessage } from '../../errors.js';
import { resolveDescriptorValue, type Secrets } from '../../secrets.js';
import type { AuthOptions } from './openapi-options.js';

/** A token request, sent through the service's guarded client. */
export type PostForm = (url: string, form: URLSearchParams, headers: Record<string, string>, signal: AbortSignal) => Promise<{ status: number; text: string }>;

/** Client-credentials tokens, fetched once and shared until shortly before they expire. */
export class ClientCredentialsToken {
  private cached: { token: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly tokenUrl: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
    private readonly scopes: readonly string[],
    private readonly post: PostForm,
    private readonly now: () => number = Date.now,
  ) {}

  /** The current token; one fetch serves every call that asks while it runs. */
  get(signal: AbortSignal): Promise<string> {
    if (this.cached && this.now() < this.cached.expiresAt) return Promise.resolve(this.cached.token);
    this.pending ??= this.fetch(signal).finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** The API refused the token: the next call fetches a new one. */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = undefined;
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
      throw new UnavailableError(`the OAuth2 token endpoint cannot be reached: ${errorMessage(err)}`, { cause: err });
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(res.text) as Record<string, unknown>;
    } catch {
      // described below by status
    }
    if (res.status >= 400 || typeof body['access_token'] !== 'string') {
      const why = typeof body['error'] === 'string' ? body['error'] : `HTTP ${res.status}`;
      if (res.status >= 500) throw new UnavailableError(`the OAuth2 token endpoint failed: ${why}`);
      throw new UnauthorizedError(`the OAuth2 token endpoint refused this worker's client credentials: ${why}`);
    }
    const lifetimeS = typeof body['expires_in'] === 'number' ? body['expires_in'] : Number(body['expires_in'] ?? 3600);
    // Renewed a little early, so a token does not expire on its way to the API.
    const marginMs = Math.min(30_000, (lifetimeS * 1000) / 10);
    this.cached = { token: body['access_token'], expiresAt: this.now() + Math.max(0, lifetimeS * 1000 - marginMs) };
    return body['access_token'];
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

  constructor(options: AuthOptions, secrets: Secrets, post: PostForm) {
    const values: string[] = [];
    const secret = (v: string, what: string): string => {
      const r = resolveDescriptorValue(v, what, secrets);
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
        this.oauth = new ClientCredentialsToken(options['token-url'], resolveDescriptorValue(options['client-id'], 'plugin.auth.client-id', secrets), secret(options['client-secret'], 'plugin.auth.client-secret'), options.scopes, post);
        break;
    }
    this.secretValues = values;
  }

  async credentials(signal: AbortSignal): Promise<Credentials> {
    if (!this.oauth) return this.fixed;
    const token = await this.oauth.get(signal);
    return { headers: { authorization: `Bearer ${token}` }, query: [], token };
  }

  /** A 401 with this token: fetch a new one next time. Returns whether a retry could help. */
  refused(c: Credentials): boolean {
    if (!this.oauth || c.token === undefined) return false;
    this.oauth.invalidate(c.token);
    return true;
  }
}
