import { AbortedError, ConfigServiceError } from '../../errors.js';
import { configResponseSchema, type ConfigApi, type ConfigRequest, type ConfigResponse } from './config-wire.js';

/**
 * TrustGraph's config service through its API gateway, as `tg-put-config-item` reaches it:
 * `POST <api-url>api/v1/config` with the request as JSON and the token as a bearer. The URL
 * and token are the operator's own (CLI flags or environment), never anyone else's input.
 */
export class GatewayConfigApi implements ConfigApi {
  readonly description: string;
  private readonly endpoint: URL;

  constructor(
    apiUrl: string,
    private readonly token: string | undefined,
    private readonly timeoutMs = 30_000,
  ) {
    let base: URL;
    try {
      base = new URL(apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`);
    } catch {
      throw new ConfigServiceError(`invalid TrustGraph API URL "${apiUrl}"`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new ConfigServiceError(`the TrustGraph API URL must be http(s), not ${base.protocol}`);
    base.username = '';
    base.password = '';
    this.endpoint = new URL('api/v1/config', base);
    this.description = `TrustGraph API gateway at ${base.origin}${base.pathname}`;
  }

  async request(req: ConfigRequest, signal?: AbortSignal): Promise<ConfigResponse> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.token) headers['authorization'] = `Bearer ${this.token}`;
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(req),
        redirect: 'error',
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw new AbortedError('config request aborted');
      const why = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : (((err as Error).cause as Error | undefined)?.message ?? (err as Error).message);
      throw new ConfigServiceError(`cannot reach the ${this.description}: ${why}`, { cause: err, retriable: true });
    }
    const text = await res.text();
    if (res.status === 401 || res.status === 403)
      throw new ConfigServiceError(`the ${this.description} refused the credentials (HTTP ${res.status}); give a token with -t/--token or TRUSTGRAPH_TOKEN`);
    if (!res.ok) throw new ConfigServiceError(`the ${this.description} answered HTTP ${res.status}: ${text.slice(0, 300)}`);
    try {
      return configResponseSchema.parse(JSON.parse(text));
    } catch (err) {
      throw new ConfigServiceError(`the ${this.description} sent an answer this client cannot read: ${(err as Error).message}`);
    }
  }

  async close(): Promise<void> {}
}
