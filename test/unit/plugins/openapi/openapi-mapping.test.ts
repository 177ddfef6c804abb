/**
 * What openapi-mapping.property.test.ts found, kept as examples: document -> descriptors ->
 * arguments -> HTTP request.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentsError } from '../../../../src/errors.js';
import { buildRequest } from '../../../../src/plugins/openapi/http-request.js';
import { openApiToolDescriptors } from '../../../../src/plugins/openapi/openapi-descriptors.js';
import type { OpenApiToolOptions } from '../../../../src/plugins/openapi/openapi-options.js';
import { apiModel } from '../../../../src/plugins/openapi/operations.js';

const SERVER = 'https://api.example/v1';

function descriptorsOf(paths: Record<string, unknown>): Record<string, unknown>[] {
  const model = apiModel({ openapi: '3.0.3', info: { title: 't' }, paths });
  return openApiToolDescriptors(model.operations, model.securitySchemes, { service: 'api', prefix: '' });
}

const options = (d: Record<string, unknown>) => d['plugin-options'] as OpenApiToolOptions;
const argumentNames = (d: Record<string, unknown>) => (d['arguments'] as { name: string }[]).map((a) => a.name);

describe('OpenAPI argument mapping', () => {
  it("imports an Idempotency-Key header as the worker's to fill with the request id, not an argument", () => {
    const [charge] = descriptorsOf({
      '/charges': {
        post: {
          operationId: 'charge',
          parameters: [
            { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'amount', in: 'query', required: true, schema: { type: 'integer' } },
          ],
          responses: { '200': { description: 'ok' } },
        },
      },
    });
    expect(argumentNames(charge!)).toEqual(['amount']);
    expect(options(charge!)['idempotency-header']).toBe('Idempotency-Key');
    expect(options(charge!).parameters.map((p) => p.name)).toEqual(['amount']);
  });

  const everywhere: OpenApiToolOptions = {
    method: 'get',
    path: '/items/{id}',
    parameters: [
      { argument: 'id', name: 'id', in: 'path', explode: true },
      { argument: 'q', name: 'q', in: 'query', explode: true },
      { argument: 'h', name: 'x-h', in: 'header', explode: true },
      { argument: 'c', name: 'c', in: 'cookie', explode: true },
    ],
  };

  it('refuses a lone surrogate in a path, query, header or cookie argument with InvalidArgumentsError', () => {
    // Found: a path or cookie value threw encodeURIComponent's URIError (an internal error); a query value became U+FFFD.
    for (const argument of ['id', 'q', 'h', 'c']) {
      const args: Record<string, unknown> = { id: '1', [argument]: 'a\ud800b' };
      expect(() => buildRequest(SERVER, everywhere, args)).toThrow(InvalidArgumentsError);
      expect(() => buildRequest(SERVER, everywhere, args)).toThrow(/lone UTF-16 surrogate/);
    }
    expect(buildRequest(SERVER, everywhere, { id: '😀', q: '😀' }).url.href).toBe('https://api.example/v1/items/%F0%9F%98%80?q=%F0%9F%98%80');
  });

  it('refuses a header argument that HTTP cannot carry as invalid arguments, not later as an API it cannot reach', () => {
    // Found: undici refused it at send time, which read as a retriable "the API cannot be reached".
    expect(() => buildRequest(SERVER, everywhere, { id: '1', h: 'price in €' })).toThrow(InvalidArgumentsError);
    expect(() => buildRequest(SERVER, everywhere, { id: '1', h: 'a\u2028b' })).toThrow(/only tabs and Latin-1 text/);
    expect(buildRequest(SERVER, everywhere, { id: '1', h: 'café\tau lait' }).headers['x-h']).toBe('café\tau lait');
  });

  it('sends nothing for an argument named like an Object method that the model left out', () => {
    // Found: `args.toString` is inherited, so the query carried "function toString() { [native code] }".
    const o: OpenApiToolOptions = {
      method: 'post',
      path: '/x',
      parameters: [
        { argument: 'toString', name: 'toString', in: 'query', explode: true },
        { argument: 'constructor', name: 'constructor', in: 'body', explode: true },
      ],
      body: { 'media-type': 'application/json' },
    };
    const r = buildRequest(SERVER, o, { q: 1 });
    expect(r.url.search).toBe('');
    expect(r.body).toBeUndefined();
    expect(buildRequest(SERVER, o, { toString: 'a', constructor: 'b' }).url.search).toBe('?toString=a');
  });

  it('gives every parameter and body field an argument of its own when their names meet', () => {
    // Found: `id` in the path and the query kept only the first (the path's {id} was never filled),
    // and a body field named like a taken `body_<name>` gave two arguments one name.
    const [d] = descriptorsOf({
      '/items/{id}': {
        post: {
          parameters: [
            { name: 'id', in: 'query', schema: { type: 'string' } },
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'body_name', in: 'query', schema: { type: 'string' } },
            { name: 'name', in: 'header', schema: { type: 'string' } },
          ],
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' }, id: { type: 'string' } } } } } },
        },
      },
    });
    const names = argumentNames(d!);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(['id', 'path_id', 'body_name', 'name', 'body_name_2', 'body_id']);
    const r = buildRequest(SERVER, options(d!), { id: 'q', path_id: 'p', body_name: 'bn', name: 'h', body_name_2: 'n', body_id: 'i' });
    expect(r.url.href).toBe('https://api.example/v1/items/p?id=q&body_name=bn');
    expect(r.headers['name']).toBe('h');
    expect(JSON.parse(r.body as string)).toEqual({ name: 'n', id: 'i' });
  });

  it('names operations apart when their names meet, so the import loads', () => {
    // Found: `/items/{id}` and `/items/id` both made get_items_id: two tools with one name and one config.
    const ds = descriptorsOf({ '/items/{id}': { get: {} }, '/items/id': { get: {} } });
    expect(ds.map((d) => [d['name'], d['operation']])).toEqual([
      ['get_items_id', 'get_items_id'],
      ['get_items_id_2', 'get_items_id_2'],
    ]);
  });
});
