import { isPlainObject, jsonText } from '../../plain-object.js';

type Json = Record<string, unknown>;

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface OperationParameter {
  readonly name: string;
  readonly in: ParameterLocation;
  readonly required: boolean;
  readonly description: string | undefined;
  readonly schema: Json;
  /** Query arrays: repeated keys (true, the default) or one comma-joined value. */
  readonly explode: boolean;
}

export interface OperationBody {
  readonly mediaType: string;
  readonly required: boolean;
  readonly description: string | undefined;
  readonly schema: Json;
}

/** One operation of a document, the same shape whichever OpenAPI version it came from. */
export interface Operation {
  readonly operationId: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly summary: string | undefined;
  readonly description: string | undefined;
  readonly tags: readonly string[];
  readonly parameters: readonly OperationParameter[];
  readonly body: OperationBody | undefined;
  /** Names of the security schemes the operation accepts (its own list, else the document's). */
  readonly security: readonly string[];
}

export interface SecurityScheme {
  readonly type: string;
  readonly [key: string]: unknown;
}

export interface ApiModel {
  readonly title: string;
  /** Server URLs with their variables at their defaults; may be relative to the document. */
  readonly servers: readonly string[];
  readonly operations: readonly Operation[];
  readonly securitySchemes: Readonly<Record<string, SecurityScheme>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const LOCATIONS = new Set<string>(['path', 'query', 'header', 'cookie']);

/** Body media types in order of preference: what a model's arguments map onto best first. */
const BODY_PREFERENCE: readonly ((mediaType: string) => boolean)[] = [
  (mediaType) => mediaType === 'application/json' || /^application\/[\w.+-]*\+json$/.test(mediaType),
  (mediaType) => mediaType === 'application/x-www-form-urlencoded',
  (mediaType) => mediaType === 'multipart/form-data',
  (mediaType) => mediaType.startsWith('text/'),
  () => true,
];

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function obj(value: unknown): Json {
  return isPlainObject(value) ? value : {};
}

function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

function securityNames(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return [...new Set(value.flatMap((req) => Object.keys(obj(req))))];
}

/** A parameter's own fields and, in OpenAPI 3, its schema; Swagger 2 keeps the schema fields on the parameter. */
function parameterOf(parameter: Json, swagger2: boolean): OperationParameter | undefined {
  const name = str(parameter['name']);
  const location = str(parameter['in']);
  if (!name || !location || !LOCATIONS.has(location)) return undefined;
  let schema = obj(parameter['schema']);
  if (swagger2) {
    const { name: _n, in: _i, required: _r, description: _d, collectionFormat: _c, ...rest } = parameter;
    schema = rest;
  }
  // Only query arrays have a choice; Swagger 2's default (csv) is one comma-joined value.
  const explode = location !== 'query' || (swagger2 ? parameter['collectionFormat'] === 'multi' : parameter['explode'] !== false);
  return {
    name,
    in: location as ParameterLocation,
    required: location === 'path' || parameter['required'] === true,
    description: str(parameter['description']),
    schema,
    explode,
  };
}

/** Parameters of the path item and the operation; the operation's win by (name, in). */
function mergedParameters(item: Json, op: Json): Json[] {
  const byKey = new Map<string, Json>();
  for (const p of [...list(item['parameters']), ...list(op['parameters'])]) {
    if (isPlainObject(p)) byKey.set(`${String(p['in'])}:${String(p['name'])}`, p);
  }
  return [...byKey.values()];
}

function pickMediaType(content: Json): [string, Json] | undefined {
  const types = Object.keys(content);
  for (const prefer of BODY_PREFERENCE) {
    const mediaType = types.find((candidate) => prefer(candidate.toLowerCase().split(';')[0]!.trim()));
    if (mediaType !== undefined) return [mediaType.split(';')[0]!.trim(), obj(content[mediaType])];
  }
  return undefined;
}

function openApi3Body(op: Json): OperationBody | undefined {
  const rb = obj(op['requestBody']);
  const picked = pickMediaType(obj(rb['content']));
  if (!picked) return undefined;
  return { mediaType: picked[0], required: rb['required'] === true, description: str(rb['description']), schema: obj(picked[1]['schema']) };
}

/** Swagger 2's `in: body` parameter, or its `formData` parameters as one object schema. */
function swagger2Body(params: Json[], consumes: readonly string[]): OperationBody | undefined {
  const body = params.find((param) => param['in'] === 'body');
  if (body) {
    const mediaType = pickMediaType(Object.fromEntries((consumes.length ? consumes : ['application/json']).map((contentType) => [contentType, {}])))![0];
    return { mediaType, required: body['required'] === true, description: str(body['description']), schema: obj(body['schema']) };
  }
  const form = params.filter((param) => param['in'] === 'formData' && str(param['name']));
  if (form.length === 0) return undefined;
  const properties: Json = {};
  const required: string[] = [];
  for (const p of form) {
    const { name, in: _i, required: r, collectionFormat: _c, ...schema } = p;
    properties[name as string] = schema['type'] === 'file' ? { ...schema, type: 'string', format: 'binary' } : schema;
    if (r === true) required.push(name as string);
  }
  const multipart = form.some((param) => param['type'] === 'file') || consumes.includes('multipart/form-data');
  return {
    mediaType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
    required: required.length > 0,
    description: undefined,
    schema: { type: 'object', properties, ...(required.length ? { required } : {}) },
  };
}

function openApi3Servers(doc: Json): string[] {
  const servers = Array.isArray(doc['servers']) ? doc['servers'].filter(isPlainObject) : [];
  return servers
    .map((server) => {
      let url = str(server['url']);
      if (!url) return undefined;
      for (const [k, v] of Object.entries(obj(server['variables']))) url = url.replaceAll(`{${k}}`, jsonText(obj(v)['default']));
      return url;
    })
    .filter((url): url is string => url !== undefined);
}

function swagger2Servers(doc: Json): string[] {
  const host = str(doc['host']);
  const basePath = str(doc['basePath']) ?? '';
  const schemes = Array.isArray(doc['schemes']) && doc['schemes'].length ? (doc['schemes'] as string[]) : ['https'];
  // Without a host, the API is served where the document is (resolved by the caller).
  if (!host) return [basePath || '/'];
  // https first: of the schemes a document offers, the one that protects the credentials.
  return [...schemes.filter((scheme) => scheme === 'https'), ...schemes.filter((scheme) => scheme !== 'https')].map(
    (scheme) => `${scheme}://${host}${basePath}`,
  );
}

/** The operations of a dereferenced OpenAPI 3.x or Swagger 2.0 document. */
export function apiModel(doc: Json): ApiModel {
  const swagger2 = typeof doc['swagger'] === 'string';
  const globalSecurity = securityNames(doc['security']) ?? [];
  const globalConsumes = Array.isArray(doc['consumes']) ? (doc['consumes'] as string[]) : [];
  const operations: Operation[] = [];
  for (const [path, rawItem] of Object.entries(obj(doc['paths']))) {
    const item = obj(rawItem);
    for (const method of METHODS) {
      if (!isPlainObject(item[method])) continue;
      const op = item[method];
      const params = mergedParameters(item, op);
      const consumes = Array.isArray(op['consumes']) ? (op['consumes'] as string[]) : globalConsumes;
      operations.push({
        operationId: str(op['operationId']),
        method,
        path,
        summary: str(op['summary']),
        description: str(op['description']),
        tags: Array.isArray(op['tags']) ? op['tags'].filter((tag): tag is string => typeof tag === 'string') : [],
        parameters: params.map((param) => parameterOf(param, swagger2)).filter((parameter): parameter is OperationParameter => parameter !== undefined),
        body: swagger2 ? swagger2Body(params, consumes) : openApi3Body(op),
        security: securityNames(op['security']) ?? globalSecurity,
      });
    }
  }
  const schemes = swagger2 ? obj(doc['securityDefinitions']) : obj(obj(doc['components'])['securitySchemes']);
  return {
    title: str(obj(doc['info'])['title']) ?? 'API',
    servers: swagger2 ? swagger2Servers(doc) : openApi3Servers(doc),
    operations,
    securitySchemes: Object.fromEntries(Object.entries(schemes).filter(([, scheme]) => isPlainObject(scheme) && typeof scheme['type'] === 'string')) as Record<
      string,
      SecurityScheme
    >,
  };
}

/** A tool name for an operation: its operationId, else one made of method and path (`get_pets_petId`). */
export function operationName(op: Operation): string {
  const raw = op.operationId ?? `${op.method}_${op.path}`;
  return (
    raw
      .replace(/[{}]/g, '')
      .replace(/[^A-Za-z0-9_-]+/g, '_')
      .replace(/_+/g, '_')
      .replace(/^_+|_+$/g, '') || op.method
  );
}
