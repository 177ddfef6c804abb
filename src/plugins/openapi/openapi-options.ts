import { z } from 'zod';
import { secretRefSchema } from '../../secrets.js';
import { httpUrl } from '../../net/http-url.js';
import { isCidr } from '../../net/address-guard.js';

export const OPENAPI_KIND = 'openapi';

/** A value that may be a secret reference (`env:NAME`, `file:key`) or literal text. */
const valueOrRef = z.string().min(1);

/** Dify's API-key auth: in a header with a prefix (`Basic`, `Bearer` or the key as is), or in the query. */
const apiKeyHeader = z.object({
  type: z.literal('api-key'),
  in: z.literal('header').default('header'),
  name: z.string().min(1).default('Authorization'),
  prefix: z.enum(['bearer', 'basic', 'custom']).default('bearer'),
  value: secretRefSchema,
});
const apiKeyQuery = z.object({ type: z.literal('api-key'), in: z.literal('query'), name: z.string().min(1), value: secretRefSchema });
const basic = z.object({ type: z.literal('basic'), username: valueOrRef, password: secretRefSchema });
const oauth2 = z.object({
  type: z.literal('oauth2-client-credentials'),
  'token-url': httpUrl,
  'client-id': valueOrRef,
  'client-secret': secretRefSchema,
  scopes: z.array(z.string().min(1)).default([]),
});

export const authOptions = z.union([z.object({ type: z.literal('none') }), apiKeyQuery, apiKeyHeader, basic, oauth2]);
export type AuthOptions = z.infer<typeof authOptions>;

const cidr = z.string().refine(isCidr, 'must be a CIDR, such as 127.0.0.0/8');

/** The `plugin` object of an `openapi` tool-service (minus `kind`). */
export const openApiServiceOptions = z.object({
  /** Base URL the operations' paths are appended to (from the document; the operator may change it). */
  server: httpUrl,
  /** Hosts requests may go to: names or `*.domain`; by default only the server's host. */
  'allow-hosts': z.array(z.string().min(1)).optional(),
  /** Loopback, private and link-local addresses: refused unless allowed here (true, or CIDRs). */
  'allow-private': z.union([z.boolean(), z.array(cidr)]).default(false),
  auth: authOptions.default({ type: 'none' }),
  /** Sent with every call; values may be secret references. */
  headers: z.record(z.string(), valueOrRef).default({}),
  'connect-timeout-ms': z.number().int().positive().default(10_000),
  /**
   * Longest wait for the response's headers and between pieces of its body. Unset: none of
   * its own; the call's deadline (the tool's `timeout-ms`, else the worker's) bounds it.
   */
  'read-timeout-ms': z.number().int().positive().optional(),
  'max-response-bytes': z
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  /** Further tries after a 429 or 503; each waits as long as Retry-After says, up to max-retry-after-ms. */
  retries: z.number().int().nonnegative().default(2),
  'max-retry-after-ms': z.number().int().nonnegative().default(30_000),
});
export type OpenApiServiceOptions = z.infer<typeof openApiServiceOptions>;

const binding = z.object({
  /** The tool argument that carries it. */
  argument: z.string().min(1),
  /** Its name on the wire. */
  name: z.string().min(1),
  in: z.enum(['path', 'query', 'header', 'cookie', 'body']),
  /** Query arrays: repeated keys (true) or one comma-joined value. */
  explode: z.boolean().default(true),
});
export type ArgumentBinding = z.infer<typeof binding>;

/** An HTTP field name (RFC 9110 token). */
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name');

/** `plugin-options` of a tool: the HTTP operation it calls and where each argument goes. */
export const openApiToolOptions = z
  .object({
    method: z.enum(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']),
    /** Relative to the service's server; `{name}` segments are path parameters. */
    path: z.string().startsWith('/'),
    parameters: z.array(binding).default([]),
    body: z
      .object({
        'media-type': z.string().min(1),
        /** The argument that is the whole body; absent: the body is an object of the `in: body` arguments. */
        argument: z.string().min(1).optional(),
      })
      .optional(),
    /**
     * The header that carries the request's idempotency key (its `id` property, the same on
     * every delivery of the request, on any worker), e.g. `Idempotency-Key`: an API that
     * dedupes on it charges or sends once however often the call runs. Only the worker sets it.
     */
    'idempotency-header': headerName.optional(),
  })
  .superRefine((options, ctx) => {
    const key = options['idempotency-header']?.toLowerCase();
    const bound = key === undefined ? -1 : options.parameters.findIndex((b) => b.in === 'header' && b.name.toLowerCase() === key);
    // The key is the worker's: an argument that could set or override it would defeat the dedupe.
    if (bound >= 0)
      ctx.addIssue({
        code: 'custom',
        path: ['parameters', bound, 'name'],
        message: `header ${options['idempotency-header']} carries the idempotency key (idempotency-header): no argument may set it`,
      });
  });
export type OpenApiToolOptions = z.infer<typeof openApiToolOptions>;

/** What an OpenAPI descriptor is parsed with. */
export const openApiSchemas = { kind: OPENAPI_KIND, serviceOptions: openApiServiceOptions, toolOptions: openApiToolOptions } as const;
