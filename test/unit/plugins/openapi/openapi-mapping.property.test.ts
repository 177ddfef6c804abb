/**
 * Properties of the OpenAPI argument mapping (fast-check): document -> operations -> tool
 * descriptors -> arguments -> HTTP request. The seed is random and printed; replay a failure with
 * `TOOLWIRE_FC_SEED=<seed> npx vitest run --project unit test/unit/plugins/openapi/openapi-mapping.property.test.ts`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import type { Catalog } from '../../../../src/catalog/catalog.js';
import type { Tool } from '../../../../src/catalog/descriptors.js';
import type { ConfigEntry } from '../../../../src/config/config-store.js';
import { ConfigError, InvalidArgumentsError } from '../../../../src/errors.js';
import { defaultRegistry } from '../../../../src/plugins/default-registry.js';
import { buildRequest, type HttpRequest } from '../../../../src/plugins/openapi/http-request.js';
import { openApiToolDescriptors } from '../../../../src/plugins/openapi/openapi-descriptors.js';
import type { OpenApiToolOptions } from '../../../../src/plugins/openapi/openapi-options.js';
import { apiModel } from '../../../../src/plugins/openapi/operations.js';
import { ownValue } from '../../../../src/plain-object.js';
import { prepareArguments } from '../../../../src/arguments/prepare-arguments.js';
import { captureLogger, pluginContext } from '../../../support/harness.js';
import { anyText, checkAsyncProperty, checkProperty, PROPERTY_TIMEOUT_MS } from '../../../support/properties.js';

const SERVER = 'https://api.example/v1';
const registry = defaultRegistry();
const ctx = pluginContext(captureLogger().log);

/** Parameter names, with the awkward ones: separators, braces, inherited keys, a credential header. */
const paramName = fc.oneof(
  { arbitrary: fc.constantFrom('id', 'name', 'q', 'limit', 'body', 'request_body', 'body_id', 'x-trace'), weight: 5 },
  { arbitrary: fc.constantFrom('a b', 'x/y', 'p?q', 'h#f', '{id}', 'toString', 'constructor', 'Authorization', 'X-Key', 'é'), weight: 2 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 5 }), weight: 1 },
);

/** JSON Schemas as documents write them for parameters and bodies. */
const schema: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ s: Record<string, unknown> }>((tie) => ({
  s: fc.oneof(
    { depthSize: 'small' },
    fc.record({ type: fc.constantFrom('string', 'integer', 'number', 'boolean'), description: fc.string({ maxLength: 6 }) }, { requiredKeys: ['type'] }),
    fc.record(
      { type: fc.constantFrom('integer', 'number'), minimum: fc.integer({ min: -5, max: 0 }), maximum: fc.integer({ min: 1, max: 50 }) },
      { requiredKeys: ['type'] },
    ),
    fc.record({ enum: fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer({ min: -3, max: 3 })), { minLength: 1, maxLength: 3 }) }),
    fc.record({ type: fc.constant(['string', 'null']) }),
    fc.record({ type: fc.constant('array'), items: tie('s') }),
    fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(paramName, tie('s'), { maxKeys: 3, noNullPrototype: true }),
        required: fc.array(paramName, { maxLength: 2 }),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({ type: fc.constant('string'), readOnly: fc.boolean() }),
    fc.constant({}),
  ),
})).s;

const parameter = fc.record(
  {
    name: paramName,
    in: fc.constantFrom('path', 'path', 'query', 'query', 'header', 'cookie', 'body', 'bogus'),
    required: fc.boolean(),
    schema,
    explode: fc.boolean(),
    description: fc.string({ maxLength: 5 }),
  },
  { requiredKeys: ['name', 'in', 'schema'] },
);

const mediaType = fc.constantFrom(
  'application/json',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
  'application/octet-stream',
);

const operation = fc.record(
  {
    operationId: fc.oneof(fc.constantFrom('getItem', 'get-item', 'get_item', 'list items'), fc.string({ maxLength: 6 })),
    summary: fc.string({ maxLength: 8 }),
    parameters: fc.array(parameter, { maxLength: 5 }),
    requestBody: fc.record(
      { required: fc.boolean(), content: fc.dictionary(mediaType, fc.record({ schema }), { minKeys: 1, maxKeys: 2 }) },
      { requiredKeys: ['content'] },
    ),
  },
  { requiredKeys: [] },
);

const pathTemplate = fc
  .array(
    fc.oneof(
      fc.constantFrom('items', 'a-b', 'a_b', 'v.2', '{id}', '{name}', '{x/y}', '{q}', 'files', '{id}.json', '{id}{name}'),
      fc.stringMatching(/^[A-Za-z0-9._~-]{0,3}$/).filter((t) => t !== '.' && t !== '..'),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((s) => `/${s.join('/')}`);

/** An OpenAPI 3 document, near valid: anything its fields may hold, wrong or right. */
const document = fc.record({
  openapi: fc.constant('3.0.3'),
  info: fc.record({ title: fc.string({ maxLength: 5 }) }),
  paths: fc.dictionary(
    pathTemplate,
    fc.dictionary(fc.constantFrom('get', 'post', 'put', 'delete', 'patch', 'parameters', 'x-other'), operation, { maxKeys: 3, noNullPrototype: true }),
    { maxKeys: 3, noNullPrototype: true },
  ),
  components: fc.record({ securitySchemes: fc.constant({ key: { type: 'apiKey', in: 'header', name: 'X-Key' }, bearer: { type: 'http', scheme: 'bearer' } }) }),
});

async function catalogOf(entries: ConfigEntry[]): Promise<Catalog | string[]> {
  try {
    return await buildCatalog(entries, registry, ctx, { portable: true });
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
}

/** What a model might send for a declared argument: values of its type, and text that tries to leave its place. */
const hostileText = fc.oneof(
  fc.constantFrom('../admin', '..', '.', 'a/b', 'a?x=1', 'a#frag', 'a%2Fb', 'line\r\nX-Injected: 1', '\u0000', 'é€😀', '\ud800', ' '),
  anyText(8),
);
function argumentFor(declaration: Record<string, unknown>): fc.Arbitrary<unknown> {
  const options = declaration['options'] as unknown[] | undefined;
  switch (declaration['type']) {
    case 'select':
      return options && options.length ? fc.constantFrom(...options) : hostileText;
    case 'number':
      return fc.oneof(fc.integer({ min: -5, max: 50 }), fc.integer({ min: -5, max: 50 }).map(String));
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(fc.oneof(hostileText, fc.integer()), { maxLength: 3 });
    case 'object':
      return fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(hostileText, fc.integer()), { maxKeys: 2, noNullPrototype: true });
    default:
      return hostileText;
  }
}

/** The text a value has on the wire, as http-request.ts writes it. */
function wireText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === undefined) return String(v);
  return JSON.stringify(v);
}

/** undici's rule for a header value (lib/core/util.js): what it refuses would fail only at send time. */
const SENDABLE_HEADER = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Every argument sits where its binding says, and nothing leaves its place. */
function expectPlacedRight(request: HttpRequest, options: OpenApiToolOptions, args: Record<string, unknown>): void {
  expect(request.url.origin).toBe(new URL(SERVER).origin);
  expect(request.url.hash).toBe('');
  expect(request.url.pathname.startsWith('/v1/')).toBe(true);
  // The path has the template's segments, each path parameter whole in its own place.
  // Split the template before filling it: a parameter's name may hold a `/` too.
  const paths = options.parameters.filter((b) => b.in === 'path');
  let marked = options.path.split('?')[0]!;
  paths.forEach((b, i) => (marked = marked.replaceAll(`{${b.name}}`, `\ue000${i}\ue001`)));
  const template = marked.split('/');
  const segments = request.url.pathname.slice('/v1'.length).split('/');
  expect(segments.length).toBe(template.length);
  template.forEach((t, i) => {
    const expected = t.replace(/\ue000(\d+)\ue001/g, (_m, n: string) => wireText(ownValue(args, paths[Number(n)]!.argument)));
    // Compared decoded: the URL parser may escape what the template leaves raw ({, space...).
    if (!t.includes('%')) expect(decodeURIComponent(segments[i]!)).toBe(expected);
  });
  for (const b of options.parameters) {
    const v = ownValue(args, b.argument);
    if (v === undefined || v === null) {
      if (b.in === 'query') expect(request.url.searchParams.has(b.name)).toBe(false);
      if (b.in === 'header') expect(Object.hasOwn(request.headers, b.name.toLowerCase())).toBe(false);
      continue;
    }
    if (b.in === 'query' && !options.path.includes('?')) {
      const got = request.url.searchParams.getAll(b.name);
      if (Array.isArray(v) && b.explode) expect(got).toEqual(v.map(wireText));
      else if (Array.isArray(v)) expect(got).toEqual([v.map(wireText).join(',')]);
      else expect(got).toEqual([wireText(v)]);
    }
    if (b.in === 'header') expect(request.headers[b.name.toLowerCase()]).toBe(wireText(v));
  }
  for (const value of Object.values(request.headers)) {
    expect(value).not.toMatch(/[\r\n\0]/);
    expect(value).toMatch(SENDABLE_HEADER);
  }
  if (options.body && typeof request.body === 'string' && /json/.test(options.body['media-type'])) {
    const fields: Record<string, unknown> = {};
    for (const b of options.parameters)
      if (b.in === 'body' && ownValue(args, b.argument) !== undefined && args[b.argument] !== null) fields[b.name] = args[b.argument];
    expect(JSON.parse(request.body)).toEqual(options.body.argument ? args[options.body.argument] : fields);
  }
}

describe('OpenAPI import (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('reads any JSON as a document without throwing', () => {
    checkProperty(
      'apiModel: arbitrary JSON',
      fc.property(
        fc.oneof(
          fc.dictionary(fc.constantFrom('openapi', 'swagger', 'paths', 'servers', 'components', 'host', 'basePath', 'security'), fc.jsonValue({ maxDepth: 4 })),
          document,
        ),
        (doc) => {
          const model = apiModel(doc);
          openApiToolDescriptors(model.operations, model.securitySchemes, { service: 'api', prefix: '' });
        },
      ),
      1_000,
    );
  });

  it('writes descriptors that validate, with one argument per name, and builds requests that put each argument in its place', async () => {
    await checkAsyncProperty(
      'openapi: document -> descriptors -> request',
      fc.asyncProperty(document, fc.infiniteStream(fc.nat()), async (doc, picks) => {
        const model = apiModel(doc);
        const descriptors = openApiToolDescriptors(model.operations, model.securitySchemes, { service: 'api', prefix: 'api_' });
        const service = {
          id: 'api',
          'request-queue': 'non-persistent://tg/request/api',
          'response-queue': 'non-persistent://tg/response/api',
          'config-params': [{ name: 'operation', required: true }],
          plugin: { kind: 'openapi', server: SERVER },
        };
        const entries: ConfigEntry[] = [
          { type: 'tool-service', key: 'api', value: service, source: 'tool-service/api.json' },
          ...descriptors.map((d, i): ConfigEntry => ({
            type: 'tool',
            key: String(i),
            value: JSON.parse(JSON.stringify(d)),
            source: `tool/${String(d['name'])}.json`,
          })),
        ];
        // Every path parameter the template names has an argument.
        model.operations.forEach((op, i) => {
          const bindings = (descriptors[i]!['plugin-options'] as OpenApiToolOptions).parameters;
          for (const p of op.parameters)
            if (p.in === 'path' && op.path.includes(`{${p.name}}`)) expect(bindings.some((b) => b.in === 'path' && b.name === p.name)).toBe(true);
        });
        const catalog = await catalogOf(entries);
        if (Array.isArray(catalog)) throw new Error(`imported descriptors refused:\n${catalog.join('\n')}`);
        const values = picks[Symbol.iterator]();
        for (const tool of catalog.tools.values()) {
          const names = tool.parameters.map((p) => p.name);
          expect(new Set(names).size).toBe(names.length);
          await expectRequestsPlacedRight(tool, values);
        }
      }),
      500,
    );
  });
});

/** Arguments for a tool, chosen from its declarations, prepared as the worker does, then sent as the plugin would. */
async function expectRequestsPlacedRight(tool: Tool, picks: Iterator<number>): Promise<void> {
  const raw = (tool.raw['arguments'] as Record<string, unknown>[]) ?? [];
  const args: Record<string, unknown> = {};
  for (const d of raw) {
    // One value per argument, drawn from the same seeded stream so a failure replays.
    const sample = fc.sample(argumentFor(d), { numRuns: 1, seed: picks.next().value as number })[0];
    if (picks.next().value! % 4 !== 0) args[d['name'] as string] = sample;
  }
  let prepared: Record<string, unknown>;
  try {
    prepared = prepareArguments(tool.parameters, tool.runtimeParameters, args);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentsError);
    return;
  }
  const options = tool.pluginOptions as OpenApiToolOptions;
  let request: HttpRequest;
  try {
    request = buildRequest(SERVER, options, prepared);
  } catch (err) {
    if (!(err instanceof InvalidArgumentsError))
      throw new Error(`buildRequest threw an untyped ${String(err)} for ${JSON.stringify(prepared)}`, { cause: err });
    return;
  }
  expectPlacedRight(request, options, prepared);
}
