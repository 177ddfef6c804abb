import { STATUS_CODES } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { ConfigError, InvalidRequestError, ToolFailedError, ToolwireError, UnavailableError, TimeoutError, errorMessage } from '../../errors.js';
import { isSecretRef, resolveDescriptorValue } from '../../secrets.js';
import { injectTraceContext } from '../../tracing/trace-context.js';
import { HOPS_HEADER } from '../../envelope/hops.js';
import { AddressGuard, AddressRefusedError, type Resolver } from '../../net/address-guard.js';
import { guardedConnector } from '../../net/guarded-connector.js';
import { abortError } from '../../async/abort-error.js';
import { sleep } from '../../async/sleep.js';
import { blobSinkFor, type BlobSink } from '../blob-sink.js';
import type { Plugin, PluginContext, PluginFactory, ToolCall } from '../plugin.js';
import type { Reach } from '../../policy/exec-policy.js';
import { ServiceAuth, type Credentials } from './auth.js';
import { buildRequest, type HttpRequest } from './http-request.js';
import { redirectRefusal } from './redirect-policy.js';
import { trustedCas } from './trusted-cas.js';
import { OPENAPI_KIND, openApiSchemas, type OpenApiServiceOptions, type OpenApiToolOptions } from './openapi-options.js';
import { mediaTypeOf, responseError, responseText, retryAfterMs, type ReadResponse } from './response-observation.js';

/** Redirects followed per call, each to the same origin (or up to https on the same host). */
const MAX_REDIRECTS = 5;
/** Without Retry-After, the wait before another try after a 429 or 503. */
const DEFAULT_RETRY_WAIT_MS = 1_000;

/** Hosts a service may reach: its own list, else the server's host and the token endpoint's. */
function allowedHosts(options: OpenApiServiceOptions): string[] {
  if (options['allow-hosts']) return options['allow-hosts'];
  const hosts = [new URL(options.server).hostname];
  if (options.auth.type === 'oauth2-client-credentials') hosts.push(new URL(options.auth['token-url']).hostname);
  return hosts.map((host) => host.replace(/^\[|\]$/g, ''));
}

/** Where files an API returns go: `OPENAPI_BLOB_DIR`, else `DIFY_BLOB_DIR`; unset: described, not kept. */
function blobSink(ctx: PluginContext): BlobSink {
  return blobSinkFor(ctx.settings['OPENAPI_BLOB_DIR'] ?? ctx.settings['DIFY_BLOB_DIR'], ctx.settings);
}

/** A response header as one string (undici gives repeated ones as an array). */
function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** undici's own failures, in words and with the code an agent can act on. */
function requestFailure(err: unknown, signal: AbortSignal): ToolwireError {
  if (signal.aborted) return abortError(signal);
  if (err instanceof ToolwireError) return err;
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  if (cause instanceof AddressRefusedError) return new ToolFailedError(`request refused: ${cause.message}`);
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return new TimeoutError(`the API did not answer in time (${code === 'UND_ERR_HEADERS_TIMEOUT' ? 'headers' : 'body'})`, { cause: err });
  if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE')
    return new ToolFailedError('the API answered with more than this service accepts (max-response-bytes)', { cause: err });
  return new UnavailableError(`the API cannot be reached: ${errorMessage(cause)}`, { cause: err });
}

/**
 * The request with its idempotency key in `name`, when the operation asks for one: the
 * request id, the same on every delivery and worker, so the API can tell a second run of one
 * request from a new one. Set over anything an argument put there (validation refuses a tool
 * that binds an argument to it); an id no header can carry is refused, never altered.
 */
function withIdempotencyKey(request: HttpRequest, name: string | undefined, requestId: string): HttpRequest {
  if (name === undefined) return request;
  if (!/^[\x21-\x7e]+$/.test(requestId))
    throw new InvalidRequestError(`the request id cannot be sent as the ${name} header: an idempotency key must be visible ASCII, without spaces`);
  return { ...request, headers: { ...request.headers, [name.toLowerCase()]: requestId } };
}

/**
 * How long a shared OAuth2 token fetch may read when the service sets no `read-timeout-ms`:
 * no single call owns that fetch, so no call's deadline can bound it.
 */
const TOKEN_READ_MS = 60_000;

/** The operations of one HTTP API, called through one guarded connection pool. */
export class OpenApiPlugin implements Plugin<OpenApiToolOptions> {
  readonly kind = OPENAPI_KIND;
  private readonly agent: Agent;
  private readonly auth: ServiceAuth;
  private readonly headers: Record<string, string>;
  /** Secret values this service sends, masked in anything an agent reads. */
  private readonly secretValues: readonly string[];
  private closing: Promise<void> | undefined;

  constructor(
    private readonly options: OpenApiServiceOptions,
    private readonly ctx: PluginContext,
    private readonly guard: AddressGuard,
    private readonly blobs: BlobSink,
    /** The CAs TLS trusts (OPENAPI_CA_FILE); undefined: Node's own. */
    ca?: readonly string[],
  ) {
    this.agent = new Agent({
      connect: guardedConnector(guard, { connectTimeoutMs: options['connect-timeout-ms'], ca }),
      // 0: no bound of undici's own (its default is 300 s); the call's signal ends it at its deadline.
      headersTimeout: options['read-timeout-ms'] ?? 0,
      bodyTimeout: options['read-timeout-ms'] ?? 0,
      maxResponseSize: options['max-response-bytes'],
    });
    this.headers = {};
    for (const [k, v] of Object.entries(options.headers)) this.headers[k.toLowerCase()] = resolveDescriptorValue(v, `plugin.headers.${k}`, ctx.secrets);
    this.auth = new ServiceAuth(
      options.auth,
      ctx.secrets,
      async (url, form, headers, signal) => {
        ctx.events?.count('token');
        const r = await this.send(
          { method: 'POST', url: new URL(url), headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
          signal,
        );
        return { status: r.status, text: r.body.toString('utf8') };
      },
      options['connect-timeout-ms'] + (options['read-timeout-ms'] ?? TOKEN_READ_MS),
    );
    const headerSecrets = Object.entries(options.headers)
      .filter(([, value]) => isSecretRef(value))
      .map(([name]) => this.headers[name.toLowerCase()]!);
    this.secretValues = [...this.auth.secretValues, ...headerSecrets];
  }

  async invoke(call: ToolCall<OpenApiToolOptions>): Promise<string> {
    const op = call.tool?.pluginOptions;
    if (!op) throw new ConfigError([`service ${call.service.id}: an openapi service answers only the tools it declares`]);
    const request = withIdempotencyKey(buildRequest(this.options.server, op, call.arguments), op['idempotency-header'], call.requestId);
    const secrets = this.secretValues;
    let oauthRetried = false;
    for (let attempt = 0; ; attempt++) {
      const credentials = await this.auth.credentials(call.signal);
      const r = await this.send(this.withCredentials(request, credentials), call.signal, call.hops);
      if (r.status >= 200 && r.status < 300) return responseText(r, this.blobs, call.signal);
      if (r.status === 401 && !oauthRetried && this.auth.refused(credentials)) {
        oauthRetried = true;
        continue;
      }
      if ((r.status === 429 || r.status === 503) && attempt < this.options.retries) {
        const asked = retryAfterMs(r.retryAfter);
        const waitMs = asked ?? DEFAULT_RETRY_WAIT_MS * 2 ** attempt;
        // A wait longer than the service allows is not taken: the agent hears now, with the API's words.
        if (waitMs <= this.options['max-retry-after-ms']) {
          call.log.info({ status: r.status, attempt: attempt + 1, waitMs }, 'API asked to retry later; waiting');
          this.ctx.events?.count('retry');
          await sleep(waitMs, call.signal);
          continue;
        }
      }
      throw responseError(r, secrets);
    }
  }

  private withCredentials(request: HttpRequest, credentials: Credentials): HttpRequest {
    let url = request.url;
    if (credentials.query.length) {
      url = new URL(request.url.href);
      for (const [k, v] of credentials.query) url.searchParams.set(k, v);
    }
    return { ...request, url, headers: { ...this.headers, ...request.headers, ...credentials.headers } };
  }

  /**
   * One exchange, following redirects to the same origin only (redirectRefusal; the guard
   * checks the host and its addresses again at every connection). The body is read whole, bounded by the agent.
   */
  private async send(request: HttpRequest, signal: AbortSignal, hops?: number): Promise<ReadResponse & { retryAfter: string | null }> {
    let { method, url, body } = request;
    const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.8', ...request.headers };
    // The call's hop count goes on, last, so that an API leading back to the fleet (the gateway) counts it.
    if (hops !== undefined) headers[HOPS_HEADER] = String(hops);
    // The request's span goes on to the API (no-op while tracing is off).
    injectTraceContext(headers);
    for (let hop = 0; ; hop++) {
      let res: Dispatcher.ResponseData;
      try {
        this.guard.checkUrl(url);
        // undici's request, not fetch: the same pool and guard at a fraction of fetch's cost.
        res = await this.agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method,
          headers,
          body: body ?? null,
          signal,
        });
      } catch (err) {
        if (err instanceof AddressRefusedError) throw new ToolFailedError(`request refused: ${err.message}`);
        throw requestFailure(err, signal);
      }
      const status = res.statusCode;
      const location = header(res.headers, 'location');
      if (status >= 300 && status < 400 && status !== 304 && location) {
        await res.body.dump();
        const next = new URL(location, url);
        const refused = redirectRefusal(url, next);
        if (refused) throw new ToolFailedError(refused);
        if (hop >= MAX_REDIRECTS) throw new ToolFailedError(`the API redirected more than ${MAX_REDIRECTS} times`);
        // 303, and 301/302 after anything but GET/HEAD, continue as GET without a body, as browsers do.
        if (status === 303 || ((status === 301 || status === 302) && method !== 'GET' && method !== 'HEAD')) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        url = next;
        continue;
      }
      let bytes: Buffer;
      try {
        bytes = Buffer.from(await res.body.arrayBuffer());
      } catch (err) {
        throw requestFailure(err, signal);
      }
      return {
        status,
        statusText: STATUS_CODES[status] ?? '',
        mediaType: mediaTypeOf(header(res.headers, 'content-type') ?? null),
        body: bytes,
        retryAfter: header(res.headers, 'retry-after') ?? null,
      };
    }
  }

  /** Idempotent: the worker closes a plugin on stop, and a reload may too. */
  close(): Promise<void> {
    // A token fetch is no call's: it would hold the pool's close until it ends.
    this.auth.close();
    this.closing ??= this.agent.close();
    return this.closing;
  }
}

/** The guard a service's options describe; `resolve` is injected by tests. */
export function serviceGuard(options: OpenApiServiceOptions, resolve?: Resolver): AddressGuard {
  return new AddressGuard({ allowHosts: allowedHosts(options), allowPrivate: options['allow-private'] }, resolve);
}

export const openApiPluginFactory: PluginFactory<OpenApiServiceOptions, OpenApiToolOptions> = {
  ...openApiSchemas,
  /**
   * The server and token endpoint, and the private addresses `allow-private` asks for: the
   * operator's TOOLWIRE_ALLOW_PRIVATE must cover them, so a config writer cannot point the
   * worker at its own network. Within that, the service's guard holds it to `allow-private`.
   */
  reaches(service): Reach[] {
    const options = service.plugin.options;
    const asked = options['allow-private'];
    const found: Reach[] = [
      { where: `${service.source}: ${asked === false ? 'plugin.server' : 'plugin.allow-private'}`, url: options.server, allowPrivate: asked },
    ];
    if (options.auth.type === 'oauth2-client-credentials')
      found.push({ where: `${service.source}: plugin.auth.token-url`, url: options.auth['token-url'], allowPrivate: false });
    return found;
  },
  /** Secrets resolve, and the server is a host and an address the service may reach. */
  async check(service, _tools, ctx): Promise<string[]> {
    const options = service.plugin.options;
    const problems: string[] = [];
    try {
      new ServiceAuth(options.auth, ctx.secrets, () => Promise.reject(new Error('not used')), 0);
      for (const [k, v] of Object.entries(options.headers)) resolveDescriptorValue(v, `plugin.headers.${k}`, ctx.secrets);
    } catch (err) {
      problems.push(...(err instanceof ConfigError ? err.problems : [errorMessage(err)]).map((problem) => `${service.source}: ${problem}`));
    }
    try {
      serviceGuard(options).checkUrl(options.server);
    } catch (err) {
      problems.push(`${service.source}: plugin.server: ${errorMessage(err)}`);
    }
    try {
      await trustedCas(ctx.settings);
    } catch (err) {
      problems.push(...(err instanceof ConfigError ? err.problems : [errorMessage(err)]).map((problem) => `${service.source}: ${problem}`));
    }
    return problems;
  },
  async create(service, ctx): Promise<OpenApiPlugin> {
    const options = service.plugin.options;
    return new OpenApiPlugin(options, ctx, serviceGuard(options, ctx.resolve), blobSink(ctx), await trustedCas(ctx.settings));
  },
};
