import type { ServerResponse } from 'node:http';
import type { Catalog } from '../catalog/catalog.js';
import { toolInputSchema } from '../arguments/json-schema.js';
import { json } from './http-io.js';

type Json = Record<string, unknown>;

/** A refusal; `type` (the wire's error type: invalid-arguments, unknown-tool...) where the gateway's own check made it. */
const error = { type: 'object', required: ['error'], properties: { error: { type: 'string' }, type: { type: 'string' } } };
/** One server-sent event of an invoke: its data is a response message as JSON. */
const event = {
  type: 'object',
  required: ['data'],
  properties: {
    event: { type: 'string' },
    data: {
      type: 'string',
      contentMediaType: 'application/json',
      contentSchema: {
        type: 'object',
        required: ['error', 'response', 'end_of_stream'],
        properties: {
          error: {
            oneOf: [{ type: 'null' }, { type: 'object', required: ['type', 'message'], properties: { type: { type: 'string' }, message: { type: 'string' } } }],
          },
          response: { type: 'string' },
          end_of_stream: { type: 'boolean' },
        },
      },
    },
  },
};

const errorAnswer = (description: string): Json => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

const readiness = {
  type: 'object',
  required: ['status', 'worker', 'transport'],
  properties: {
    status: { enum: ['ready', 'not-ready'] },
    worker: { type: 'string' },
    transport: { enum: ['connected', 'disconnected'] },
    config: { type: 'object' },
    abandoned: { type: 'array', items: { type: 'object' } },
    faults: { type: 'array', items: { type: 'object' } },
  },
};

const toolList = {
  type: 'object',
  required: ['tools'],
  properties: {
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'description', 'service', 'input_schema'],
        properties: { name: { type: 'string' }, description: { type: 'string' }, service: { type: 'string' }, input_schema: { type: 'object' } },
      },
    },
    config: { type: 'object' },
  },
};

/** The body of an invoke: the tool's own argument schema where it is known. */
function invokeBody(argumentsSchema: Json): Json {
  const required = Array.isArray(argumentsSchema['required']) && argumentsSchema['required'].length > 0;
  return {
    type: 'object',
    ...(required ? { required: ['arguments'] } : {}),
    properties: {
      arguments: argumentsSchema,
      stream: { type: 'boolean', description: 'answer as a stream of chunks (one event each)' },
      user: { type: 'string', description: 'passed to the tool as the requesting user' },
    },
  };
}

function invokeOperation(summary: string, argumentsSchema: Json, guarded: boolean): Json {
  const body = invokeBody(argumentsSchema);
  return {
    post: {
      summary,
      // Always a body, JSON: a call sent any other way is one a web page could forge (415).
      requestBody: { required: true, content: { 'application/json': { schema: body } } },
      responses: {
        '200': {
          description: 'Server-Sent Events: one event per response message; a worker error or a gateway failure is an event too',
          content: { 'text/event-stream': { schema: { $ref: '#/components/schemas/Event' } } },
        },
        '400': errorAnswer(
          'the body is not an object of the fields below, or the tool refuses its arguments (a required one missing, a value that cannot be read as its type)',
        ),
        ...(guarded ? { '401': errorAnswer('no bearer token, or the wrong one') } : {}),
        '404': errorAnswer('no tool of that name (any more: the catalog may have changed since this document was read)'),
        '413': errorAnswer('the body is larger than the gateway accepts'),
        '415': errorAnswer('the body is not declared as application/json'),
      },
    },
  };
}

/**
 * The HTTP surface as an OpenAPI 3.1 document, made from the catalog being served: each
 * tool has its own invoke route with its own argument schema, so a client generator (or a
 * test tool such as Schemathesis) sees the arguments each tool takes.
 */
export function surfaceDocument(catalog: Catalog, guarded: boolean, version: string): Json {
  const security = guarded ? { security: [{ bearer: [] }] } : {};
  const v1 = (pathItem: Json): Json => Object.fromEntries(Object.entries(pathItem).map(([method, op]) => [method, { ...(op as Json), ...security }]));
  const paths: Json = {
    '/healthz': {
      get: {
        summary: 'liveness',
        responses: {
          '200': {
            description: 'alive',
            content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } } } },
          },
        },
      },
    },
    '/readyz': {
      get: {
        summary: 'readiness: serving its catalog, connected, nothing blocked',
        responses: {
          '200': { description: 'ready', content: { 'application/json': { schema: readiness } } },
          '503': { description: 'not ready, and why', content: { 'application/json': { schema: readiness } } },
        },
      },
    },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics',
        responses: { '200': { description: 'text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    '/openapi.json': v1({
      get: {
        summary: 'this document',
        responses: {
          '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } },
          ...(guarded ? { '401': errorAnswer('no bearer token, or the wrong one') } : {}),
        },
      },
    }),
    '/v1/tools': {
      get: v1({
        get: {
          summary: 'the tools served, with their argument schemas',
          responses: {
            '200': { description: 'the catalog', content: { 'application/json': { schema: toolList } } },
            ...(guarded ? { '401': errorAnswer('no bearer token, or the wrong one') } : {}),
          },
        },
      })['get'],
    },
  };
  for (const t of catalog.tools.values()) {
    paths[`/v1/tools/${encodeURIComponent(t.name)}/invoke`] = v1(
      invokeOperation(t.description || `call ${t.name}`, toolInputSchema(t.parameters) as unknown as Json, guarded),
    );
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'toolwire worker',
      version,
      description: 'Health, metrics, the tool catalog, and a gateway that calls tools through the broker as an agent does.',
    },
    paths,
    components: { schemas: { Error: error, Event: event }, ...(guarded ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } : {}) },
  };
}

/** `GET /openapi.json`. */
export function openApiDocument(res: ServerResponse, catalog: Catalog, guarded: boolean, version: string): void {
  json(res, 200, surfaceDocument(catalog, guarded, version));
}
