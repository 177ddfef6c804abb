import { isPlainObject } from '../../plain-object.js';
import { schemaArgument } from '../../arguments/schema-argument.js';
import type { ArgumentBinding, AuthOptions, OpenApiToolOptions } from './openapi-options.js';
import { operationName, type Operation, type SecurityScheme } from './operations.js';

type Json = Record<string, unknown>;

/** Media types whose body is an object of named fields, so each field can be an argument. */
const FIELD_BODIES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);

function isJsonMedia(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/**
 * Header and cookie parameters that carry a credential (`Authorization`, or any API key the
 * document declares): the service's auth fills them, and the model must neither be asked for
 * a credential nor be able to send one of its own.
 */
function credentialParameter(parameter: { name: string; in: string }, schemes: readonly SecurityScheme[]): boolean {
  if (parameter.in === 'header' && parameter.name.toLowerCase() === 'authorization') return true;
  return schemes.some(
    (scheme) =>
      scheme.type === 'apiKey' &&
      scheme['in'] === parameter.in &&
      typeof scheme['name'] === 'string' &&
      scheme['name'].toLowerCase() === parameter.name.toLowerCase(),
  );
}

/** `base`, else `base_2`, `base_3`...: the first name not in `taken`, which it then joins. */
function unique(base: string, taken: Set<string>): string {
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

export interface OperationTool {
  readonly arguments: Json[];
  readonly options: OpenApiToolOptions;
}

/**
 * The arguments a model fills for an operation, and where each goes on the wire. Parameters
 * in path, query, header and cookie come first; an object body's properties follow (renamed
 * `body_<name>` when a parameter has the name); any other body is one argument, `body`.
 */
export function operationTool(op: Operation, schemes: Readonly<Record<string, SecurityScheme>>): OperationTool {
  const declared = Object.values(schemes);
  const args: Json[] = [];
  const bindings: ArgumentBinding[] = [];
  // `explode` is written only where it differs from the default, to keep descriptors short.
  const binding = (argumentBinding: ArgumentBinding): ArgumentBinding =>
    (argumentBinding.explode ? (({ explode: _e, ...rest }) => rest)(argumentBinding) : argumentBinding) as ArgumentBinding;
  const taken = new Set<string>();
  let idempotencyHeader: string | undefined;
  for (const p of op.parameters) {
    if (credentialParameter(p, declared)) continue;
    // The worker fills it with the request's id, the same on a redelivery: not the model's to choose.
    if (p.in === 'header' && p.name.toLowerCase() === IDEMPOTENCY_KEY) {
      idempotencyHeader = p.name;
      continue;
    }
    // One name may be in two places (`id` in the path and the query): the second is `<in>_<name>`.
    const argument = unique(taken.has(p.name) ? `${p.in}_${p.name}` : p.name, taken);
    args.push(schemaArgument(argument, p.description && !p.schema['description'] ? { ...p.schema, description: p.description } : p.schema, p.required));
    bindings.push(binding({ argument, name: p.name, in: p.in, explode: p.explode }));
  }
  let body: OpenApiToolOptions['body'];
  if (op.body) {
    const schema = op.body.schema;
    const properties = isPlainObject(schema['properties']) ? schema['properties'] : undefined;
    const fields = properties && (isJsonMedia(op.body.mediaType) || FIELD_BODIES.has(op.body.mediaType)) && schema['type'] !== 'array';
    if (fields) {
      const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
      for (const [name, s] of Object.entries(properties)) {
        const prop = isPlainObject(s) ? s : {};
        // The server sets these; a model sending one would be refused or ignored.
        if (prop['readOnly'] === true) continue;
        const argument = unique(taken.has(name) ? `body_${name}` : name, taken);
        args.push(schemaArgument(argument, prop, op.body.required && required.has(name)));
        bindings.push(binding({ argument, name, in: 'body', explode: true }));
      }
      body = { 'media-type': op.body.mediaType };
    } else {
      const argument = unique(taken.has('body') ? 'request_body' : 'body', taken);
      const described = op.body.description && !schema['description'] ? { ...schema, description: op.body.description } : schema;
      args.push(schemaArgument(argument, Object.keys(described).length ? described : { type: 'string' }, op.body.required));
      body = { 'media-type': op.body.mediaType, argument };
    }
  }
  return {
    arguments: args,
    options: {
      method: op.method as OpenApiToolOptions['method'],
      path: op.path,
      parameters: bindings,
      ...(body ? { body } : {}),
      ...(idempotencyHeader ? { 'idempotency-header': idempotencyHeader } : {}),
    },
  };
}

/** The header name the IETF draft (httpapi-idempotency-key-header) gives the key, lowercased. */
const IDEMPOTENCY_KEY = 'idempotency-key';

export interface OpenApiImportOptions {
  readonly service: string;
  /** Tool names are `<prefix><operation name>`. */
  readonly prefix: string;
}

/**
 * Tool descriptors for a document's operations. Each sets the service's config param
 * `operation` to its operation's name, so an agent that sends a tool's config values (as
 * TrustGraph's do) reaches the right one.
 */
export function openApiToolDescriptors(
  ops: readonly Operation[],
  schemes: Readonly<Record<string, SecurityScheme>>,
  importOptions: OpenApiImportOptions,
): Json[] {
  // Names are unique per service (`/items/{id}` and `/items/id` both read get_items_id).
  const names = new Set<string>();
  return ops.map((op) => {
    const name = unique(operationName(op), names);
    const { arguments: args, options } = operationTool(op, schemes);
    return {
      type: 'tool-service',
      name: `${importOptions.prefix}${name}`,
      description: op.description ?? op.summary ?? `${op.method.toUpperCase()} ${op.path}`,
      service: importOptions.service,
      operation: name,
      'plugin-options': options,
      arguments: args,
    };
  });
}

function envName(service: string, what: string): string {
  return `${service}_${what}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
}

/**
 * The service's auth from the document's first usable security scheme; the secret itself is
 * left to the operator as a reference (`--secret-ref`, else `env:<SERVICE>_API_KEY`...).
 * Returns undefined, with the reason, for a scheme toolwire cannot use.
 */
export function authFromScheme(
  name: string,
  securityScheme: SecurityScheme,
  service: string,
  secretRef: string | undefined,
): { auth?: AuthOptions; why?: string } {
  const t = securityScheme.type;
  if (t === 'apiKey') {
    const value = secretRef ?? `env:${envName(service, 'api_key')}`;
    if (securityScheme['in'] === 'query') return { auth: { type: 'api-key', in: 'query', name: String(securityScheme['name']), value } };
    if (securityScheme['in'] === 'header') return { auth: { type: 'api-key', in: 'header', name: String(securityScheme['name']), prefix: 'custom', value } };
    return { why: `security scheme ${name}: an API key in a ${String(securityScheme['in'])} is not supported` };
  }
  const scheme = typeof securityScheme['scheme'] === 'string' ? securityScheme['scheme'].toLowerCase() : '';
  if ((t === 'http' && scheme === 'basic') || t === 'basic') {
    return { auth: { type: 'basic', username: `env:${envName(service, 'username')}`, password: secretRef ?? `env:${envName(service, 'password')}` } };
  }
  if (t === 'http' && scheme === 'bearer') {
    return { auth: { type: 'api-key', in: 'header', name: 'Authorization', prefix: 'bearer', value: secretRef ?? `env:${envName(service, 'token')}` } };
  }
  const flows = isPlainObject(securityScheme['flows']) ? securityScheme['flows'] : {};
  const cc = isPlainObject(flows['clientCredentials'])
    ? flows['clientCredentials']
    : t === 'oauth2' && securityScheme['flow'] === 'application'
      ? securityScheme
      : undefined;
  if (t === 'oauth2' && cc && typeof cc['tokenUrl'] === 'string') {
    return {
      auth: {
        type: 'oauth2-client-credentials',
        'token-url': cc['tokenUrl'],
        'client-id': `env:${envName(service, 'client_id')}`,
        'client-secret': secretRef ?? `env:${envName(service, 'client_secret')}`,
        scopes: Object.keys(isPlainObject(cc['scopes']) ? cc['scopes'] : {}),
      },
    };
  }
  return {
    why: `security scheme ${name}: type ${t}${scheme ? ` (${scheme})` : ''} is not supported; supported: API key in a header or the query, HTTP basic or bearer, OAuth2 client credentials`,
  };
}
