/**
 * Properties of descriptor validation (fast-check). The seed is random and printed; replay a
 * failure with `TOOLWIRE_FC_SEED=<seed> npx vitest run --project unit test/unit/catalog/descriptors.property.test.ts`.
 *
 * Catalogs are built `portable`: the plugins' load-time checks (which start MCP servers and
 * import modules) are not what is under test, and random descriptors must not run anything.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../src/assembly/build-catalog.js';
import type { Catalog } from '../../../src/catalog/catalog.js';
import { toolSchema, toolServiceSchema } from '../../../src/catalog/descriptors.js';
import type { ConfigEntry } from '../../../src/config/config-store.js';
import { ConfigError } from '../../../src/errors.js';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import { ParameterType } from '../../../src/arguments/parameter.js';
import { captureLogger, pluginContext } from '../../support/harness.js';
import { anyText, checkAsyncProperty, checkProperty, PROPERTY_TIMEOUT_MS } from '../../support/properties.js';

const registry = defaultRegistry();
const ctx = pluginContext(captureLogger().log);

/** buildCatalog's whole contract: a catalog, or a ConfigError listing problems. */
async function catalogOrProblems(entries: ConfigEntry[]): Promise<Catalog | string[]> {
  try {
    return await buildCatalog(entries, registry, ctx, { portable: true });
  } catch (err) {
    if (err instanceof ConfigError) {
      expect(err.problems.length).toBeGreaterThan(0);
      return [...err.problems];
    }
    throw new Error(`buildCatalog threw an untyped ${String(err)}`, { cause: err });
  }
}

/** A value that must stay out of every problem text: what a secret looks like in a descriptor. */
const CANARY = 'sk-live-CANARY0123456789';

const identifier = fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/);
/** Names a descriptor might use, with the ones an object inherits. */
const keyName = fc.oneof({ arbitrary: identifier, weight: 4 }, { arbitrary: fc.constantFrom('toString', 'constructor', 'valueOf', '__proto__'), weight: 1 });
const plainValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), anyText(10));
/** A value where a secret may sit by mistake (not an identifier, a topic or a name, which problems quote on purpose). */
const anyValue = fc.oneof(plainValue, fc.constant(CANARY));

/** A secret where a descriptor may hold one by mistake: a header, a token, a URL's password, an env value. */
const secretPlacement = fc.constantFrom<Record<string, unknown>>(
  { kind: 'mcp', transport: 'http', url: `https://user:${CANARY}@mcp.example/mcp` },
  { kind: 'mcp', transport: 'http', url: 'https://mcp.example/mcp', token: CANARY },
  { kind: 'mcp', transport: 'http', url: 'https://mcp.example/mcp', headers: { authorization: 7, 'x-key': CANARY } },
  { kind: 'mcp', transport: 'stdio', command: 'server', env: { API_KEY: CANARY, N: 1 } },
  { kind: 'openapi', server: `https://user:${CANARY}@api.example/`, auth: { type: 'api-key', value: CANARY } },
  { kind: 'openapi', server: 'https://api.example/', auth: { type: 'basic', username: 'u', password: CANARY } },
  {
    kind: 'openapi',
    server: 'not a url',
    headers: { 'x-api-key': CANARY },
    auth: { type: 'oauth2-client-credentials', 'token-url': 'https://t.example/', 'client-id': 'c', 'client-secret': CANARY },
  },
  { kind: 'dify-daemon', 'api-key': CANARY, url: 42 },
  { kind: 'module', module: 7, secret: CANARY },
);

/** A tool-service descriptor, near valid: some fields right, some wrong, some missing. */
const nearValidService = fc.record(
  {
    id: fc.oneof(identifier, plainValue),
    'request-queue': fc.oneof(
      identifier.map((t) => `request:tg:${t}`),
      fc.constant('persistent://tg/flow/x'),
      plainValue,
    ),
    'response-queue': fc.oneof(
      identifier.map((t) => `non-persistent://tg/response/${t}`),
      plainValue,
    ),
    'config-params': fc.oneof(
      fc.array(fc.oneof(keyName, fc.record({ name: keyName, required: fc.oneof(fc.boolean(), anyValue) })), { maxLength: 3 }),
      anyValue,
    ),
    plugin: fc.oneof(secretPlacement, fc.dictionary(keyName, anyValue, { maxKeys: 3 }), anyValue),
    concurrency: fc.oneof(fc.integer({ min: -2, max: 10 }), anyValue),
    stream: fc.oneof(fc.constantFrom('single', 'stream'), anyValue),
  },
  { requiredKeys: [] },
);

const nearValidTool = fc.record(
  {
    type: fc.oneof(fc.constant('tool-service'), plainValue),
    name: fc.oneof(identifier, plainValue),
    service: fc.oneof(identifier, plainValue),
    description: anyValue,
    arguments: fc.oneof(
      fc.array(
        fc.oneof(
          fc.record(
            {
              name: fc.oneof(keyName, plainValue),
              type: fc.oneof(fc.constantFrom(...Object.values(ParameterType)), plainValue),
              form: fc.oneof(fc.constantFrom('llm', 'form'), anyValue),
              required: anyValue,
            },
            { requiredKeys: [] },
          ),
          anyValue,
        ),
        { maxLength: 3 },
      ),
      anyValue,
    ),
    'runtime-parameters': fc.oneof(fc.dictionary(keyName, anyValue, { maxKeys: 2 }), anyValue),
    'plugin-options': fc.oneof(fc.dictionary(keyName, anyValue, { maxKeys: 2 }), anyValue),
    style: anyValue,
  },
  { requiredKeys: [] },
);

const entries = fc.array(
  fc.oneof(
    nearValidService.map((v): ConfigEntry => ({ type: 'tool-service', key: 's', value: v, source: 'tool-service/s.json' })),
    nearValidTool.map((v): ConfigEntry => ({ type: 'tool', key: 't', value: v, source: 'tool/t.json' })),
    fc.jsonValue({ maxDepth: 3 }).map((v): ConfigEntry => ({ type: 'tool', key: 'j', value: v, source: 'tool/j.json' })),
  ),
  { maxLength: 4 },
);

describe('descriptor schemas (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('never throw on arbitrary JSON: they answer with issues', () => {
    checkProperty(
      'toolServiceSchema/toolSchema: arbitrary JSON',
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 4 }), nearValidService, nearValidTool), (value) => {
        toolServiceSchema.safeParse(value);
        toolSchema.safeParse(value);
      }),
      2_000,
    );
  });
});

describe('buildCatalog (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('answers any descriptors with a catalog or a list of problems, none of which echoes a secret value', async () => {
    await checkAsyncProperty(
      'buildCatalog: near-valid descriptors',
      fc.asyncProperty(entries, async (list) => {
        const r = await catalogOrProblems(list);
        if (Array.isArray(r)) for (const p of r) expect(p).not.toContain(CANARY);
      }),
      1_000,
    );
  });

  /** Valid descriptors, generated from what the schemas accept: one service, tools told apart by their config values. */
  const validFleet = fc
    .record({
      id: identifier,
      params: fc.uniqueArray(fc.record({ name: keyName.filter((n) => n !== '__proto__'), required: fc.boolean() }), { selector: (p) => p.name, maxLength: 3 }),
      short: fc.boolean(),
      tools: fc.uniqueArray(
        fc.record({
          name: identifier,
          values: fc.array(fc.option(fc.oneof(fc.string({ maxLength: 5 }), fc.integer()), { nil: undefined }), { minLength: 3, maxLength: 3 }),
          arguments: fc.uniqueArray(
            fc.record({ name: identifier, type: fc.constantFrom(...Object.values(ParameterType)), description: fc.string({ maxLength: 10 }) }),
            { selector: (a) => a.name, maxLength: 3 },
          ),
        }),
        { selector: (t) => t.name, maxLength: 4 },
      ),
    })
    .map(({ id, params, short, tools }) => {
      const service = {
        id,
        'request-queue': short ? `request:tg:${id}` : `persistent://tg/flow/${id}`,
        'response-queue': `non-persistent://tg/response/${id}`,
        'config-params': params,
      };
      const seen = new Set<string>();
      const descriptors: Record<string, unknown>[] = [];
      for (const t of tools) {
        const d: Record<string, unknown> = { type: 'tool-service', name: t.name, description: 'd', service: id, arguments: t.arguments };
        params.forEach((p, i) => {
          const v = t.values[i] ?? (p.required ? `v${i}` : undefined);
          if (v !== undefined) Object.defineProperty(d, p.name, { value: v, enumerable: true, writable: true, configurable: true });
        });
        // Two tools with the same config values would be refused, rightly: keep the first.
        const key = JSON.stringify(params.map((p) => (Object.hasOwn(d, p.name) ? d[p.name] : null)));
        if (seen.has(key)) continue;
        seen.add(key);
        descriptors.push(d);
      }
      return { service, descriptors };
    });

  it('accepts valid descriptors, and each tool is found by the config values an agent sends', async () => {
    await checkAsyncProperty(
      'buildCatalog: valid descriptors',
      fc.asyncProperty(validFleet, async ({ service, descriptors }) => {
        const list: ConfigEntry[] = [
          { type: 'tool-service', key: service.id, value: JSON.parse(JSON.stringify(service)), source: 'tool-service/s.json' },
          // Through JSON, as a config source reads them.
          ...descriptors.map((d, i): ConfigEntry => ({ type: 'tool', key: `t${i}`, value: JSON.parse(JSON.stringify(d)), source: `tool/t${i}.json` })),
        ];
        const r = await catalogOrProblems(list);
        if (Array.isArray(r)) throw new Error(`valid descriptors refused: ${r.join('; ')}`);
        const s = r.services.get(service.id)!;
        for (const d of descriptors) {
          const t = r.tools.get(d['name'] as string)!;
          // The config holds only what the descriptor has, as JSON values.
          expect(JSON.parse(JSON.stringify(t.config))).toEqual(t.config);
          const sent = JSON.parse(JSON.stringify(t.config)) as Record<string, unknown>;
          expect(r.resolve(s, sent).tool?.name).toBe(t.name);
        }
      }),
      500,
    );
  });
});
