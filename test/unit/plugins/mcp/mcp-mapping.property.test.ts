/**
 * Properties of the MCP argument mapping (fast-check): an MCP tool's input schema -> tool
 * descriptor -> the arguments the worker passes on. Ajv (the validator the MCP SDK itself
 * uses) judges the arguments against the server's schema. The seed is random and printed;
 * replay a failure with `TOOLWIRE_FC_SEED=<seed> npx vitest run --project unit test/unit/plugins/mcp/mcp-mapping.property.test.ts`.
 */
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import type { ConfigEntry } from '../../../../src/config/config-store.js';
import { ConfigError } from '../../../../src/errors.js';
import { defaultRegistry } from '../../../../src/plugins/default-registry.js';
import { mcpToolDescriptors } from '../../../../src/plugins/mcp/mcp-descriptors.js';
import { toolInputSchema } from '../../../../src/arguments/json-schema.js';
import { prepareArguments } from '../../../../src/arguments/prepare-arguments.js';
import { captureLogger, pluginContext } from '../../../support/harness.js';
import { checkAsyncProperty, checkProperty, PROPERTY_TIMEOUT_MS } from '../../../support/properties.js';

const registry = defaultRegistry();
const ctx = pluginContext(captureLogger().log);
// ownProperties: a property named toString is not the one every object inherits.
const ajv = new Ajv({ strict: false, ownProperties: true });

type Schema = Record<string, unknown>;

/** A property's schema, with an arbitrary of values it accepts. */
interface Typed {
  readonly schema: Schema;
  readonly value: fc.Arbitrary<unknown>;
}

const propertyName = fc.oneof(fc.constantFrom('q', 'limit', 'tags', 'opts', 'toString', 'when'), fc.string({ minLength: 1, maxLength: 4 }));

const typed: fc.Arbitrary<Typed> = fc.letrec<{ t: Typed }>((tie) => ({
  t: fc.oneof(
    { depthSize: 'small' },
    fc.constant<Typed>({ schema: { type: 'string' }, value: fc.string({ maxLength: 6 }) }),
    fc
      .record({ min: fc.integer({ min: -10, max: 0 }), max: fc.integer({ min: 0, max: 10 }) })
      .map(({ min, max }): Typed => ({ schema: { type: 'integer', minimum: min, maximum: max }, value: fc.integer({ min, max }) })),
    fc.constant<Typed>({ schema: { type: 'number' }, value: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
    fc.constant<Typed>({ schema: { type: 'boolean' }, value: fc.boolean() }),
    fc
      .uniqueArray(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 3 })
      .map((e): Typed => ({ schema: { type: 'string', enum: e }, value: fc.constantFrom(...e) })),
    fc
      .uniqueArray(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 3 })
      .map((e): Typed => ({ schema: { type: 'integer', enum: e }, value: fc.constantFrom(...e) })),
    fc.constant<Typed>({ schema: { type: ['string', 'null'] }, value: fc.string({ maxLength: 4 }) }),
    fc.constant<Typed>({ schema: {}, value: fc.jsonValue({ maxDepth: 1 }).filter((v) => v !== null) }),
    fc.constant<Typed>({ schema: { description: 'untyped' }, value: fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean()) }),
    tie('t').map((items): Typed => ({ schema: { type: 'array', items: items.schema }, value: fc.array(items.value, { maxLength: 3 }) })),
    fc.dictionary(propertyName, tie('t'), { maxKeys: 3, noNullPrototype: true }).map((props): Typed => ({
      schema: { type: 'object', properties: Object.fromEntries(Object.entries(props).map(([k, t]) => [k, t.schema])) },
      value: objectValue(props, new Set()),
    })),
  ),
})).t;

/** An object that has every required property and some of the others, each a value its schema accepts. */
function objectValue(props: Record<string, Typed>, required: ReadonlySet<string>): fc.Arbitrary<Record<string, unknown>> {
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, t] of Object.entries(props)) shape[k] = t.value;
  return fc.record(shape, { requiredKeys: Object.keys(props).filter((k) => required.has(k)), noNullPrototype: true });
}

/** An MCP tool with an input schema, and arguments its schema accepts. */
const toolWithArguments = fc
  .record({
    name: fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/),
    props: fc.dictionary(propertyName, typed, { maxKeys: 4, noNullPrototype: true }),
    required: fc.array(propertyName, { maxLength: 3 }),
  })
  .chain(({ name, props, required }) => {
    const req = new Set(required.filter((r) => Object.hasOwn(props, r)));
    const inputSchema = { type: 'object' as const, properties: Object.fromEntries(Object.entries(props).map(([k, t]) => [k, t.schema])), required: [...req] };
    return objectValue(props, req).map((args) => ({ tool: { name, inputSchema }, args }));
  });

describe('MCP import (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('maps any input schema without throwing', () => {
    checkProperty(
      'mcp mcpToolDescriptors: arbitrary input schemas',
      // Whatever the MCP SDK lets through its own ToolSchema: the shapes a server can really list.
      fc.property(
        fc.oneof(
          { arbitrary: fc.jsonValue({ maxDepth: 4 }), weight: 1 },
          {
            arbitrary: fc.record(
              { type: fc.constant('object'), properties: fc.jsonValue({ maxDepth: 3 }), required: fc.jsonValue({ maxDepth: 1 }) },
              { requiredKeys: ['type'] },
            ),
            weight: 4,
          },
        ),
        fc.string({ maxLength: 5 }),
        (schema, name) => {
          const listed = ToolSchema.safeParse({ name, inputSchema: schema });
          fc.pre(listed.success);
          mcpToolDescriptors([listed.data], { service: 'mcp', prefix: '' });
        },
      ),
      500,
    );
  });

  it('writes descriptors that validate, and passes arguments the server schema accepts unchanged, to a schema the model sees alike', async () => {
    await checkAsyncProperty(
      'mcp: input schema -> descriptor -> arguments',
      fc.asyncProperty(toolWithArguments, async ({ tool, args }) => {
        const [descriptor] = mcpToolDescriptors([tool], { service: 'mcp', prefix: 'mcp_' });
        const service = {
          id: 'mcp',
          'request-queue': 'non-persistent://tg/request/mcp',
          'response-queue': 'non-persistent://tg/response/mcp',
          'config-params': [{ name: 'tool', required: true }],
          plugin: { kind: 'mcp', transport: 'http', url: 'https://mcp.example/mcp' },
        };
        let catalog;
        try {
          catalog = await buildCatalog(
            [
              { type: 'tool-service', key: 'mcp', value: service, source: 'tool-service/mcp.json' },
              { type: 'tool', key: 't', value: JSON.parse(JSON.stringify(descriptor)), source: 'tool/t.json' },
            ] satisfies ConfigEntry[],
            registry,
            ctx,
            { portable: true },
          );
        } catch (err) {
          throw new Error(`imported descriptor refused: ${err instanceof ConfigError ? err.problems.join('; ') : String(err)}`);
        }
        const t = catalog.tools.get(`mcp_${tool.name}`)!;
        const validate = ajv.compile(tool.inputSchema);
        expect(validate(args)).toBe(true);
        const prepared = prepareArguments(t.parameters, t.runtimeParameters, args);
        // What the server would get: still valid, and what the model sent.
        expect(validate(prepared), JSON.stringify(validate.errors)).toBe(true);
        expect(prepared).toEqual(args);
        // The model is shown each property with the server's own type.
        const shown = toolInputSchema(t.parameters);
        for (const [k, s] of Object.entries(tool.inputSchema.properties ?? {})) {
          // A nullable type is shown as its other type: leaving the argument out is the model's null.
          const declared = s['type'];
          const type = Array.isArray(declared) ? declared.find((x) => x !== 'null') : declared;
          if (type !== undefined) expect(shown.properties[k]?.['type']).toEqual(type === 'integer' ? expect.stringMatching(/^(integer|number)$/) : type);
        }
      }),
      500,
    );
  });
});
