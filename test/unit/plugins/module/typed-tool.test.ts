import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, ErrorCode, InvalidArgumentsError } from '../../../../src/errors.js';
import { defineTool } from '../../../../src/plugins/module/module-tool.js';
import { modulePluginFactory } from '../../../../src/plugins/module/module-plugin.js';
import { parseArguments, typedToolArguments } from '../../../../src/plugins/module/typed-tool.js';
import type { Plugin, ToolCall } from '../../../../src/plugins/plugin.js';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';
import { asServed, captureLogger, entry, pluginContext, pluginMaker } from '../../../support/harness.js';
import { serviceDescriptor as service } from '../../../support/descriptors.js';
import { defaultRegistry } from '../../../../src/plugins/default-registry.js';
import type { Catalog } from '../../../../src/catalog/catalog.js';
import { toolInputSchema } from '../../../../src/arguments/json-schema.js';
import { typedToolDescriptors } from '../../../../src/plugins/module/module-descriptors.js';
import { runTool } from '../../../../src/plugins/module/run-tool.js';
import { startFixture, type Fixture } from '../../../support/worker-fixture.js';
import { convert } from '../../../fixtures/typed/distance.js';

const FIXTURES = resolve('test/fixtures/typed');

const echo = defineTool({
  name: 'echo',
  description: 'Says it back',
  arguments: z.object({
    text: z.string().describe('What to say'),
    times: z.number().int().min(1).max(3).default(1),
    tone: z.enum(['plain', 'loud']).optional(),
    tags: z.array(z.string()).optional(),
  }),
  run: (args) => (args.tone === 'loud' ? args.text.toUpperCase() : args.text).repeat(args.times),
});

describe('defineTool with a schema', () => {
  it("derives argument descriptors: types, required, enums, defaults, descriptions, each with zod's JSON Schema", () => {
    expect(typedToolArguments(echo)).toEqual([
      { name: 'text', required: true, type: 'string', description: 'What to say', input_schema: { type: 'string', description: 'What to say' } },
      { name: 'times', required: false, type: 'number', default: 1, input_schema: { type: 'integer', minimum: 1, maximum: 3, default: 1 } },
      { name: 'tone', required: false, type: 'select', options: ['plain', 'loud'], input_schema: { type: 'string', enum: ['plain', 'loud'] } },
      { name: 'tags', required: false, type: 'array', input_schema: { type: 'array', items: { type: 'string' } } },
    ]);
  });

  it('validates and types the arguments, defaults applied', () => {
    expect(parseArguments(echo, { text: 'hi' })).toEqual({ text: 'hi', times: 1 });
  });

  it('refuses arguments that fail the schema with what to fix, field by field', () => {
    const run = () => parseArguments(echo, { times: 9, tone: 'soft' });
    expect(run).toThrow(InvalidArgumentsError);
    expect(run).toThrow(
      /invalid arguments for echo: text: Invalid input: expected string, received undefined; times: Too big: expected number to be <=3; tone: Invalid option: expected one of "plain"\|"loud"/,
    );
  });

  it('keeps the function form as it was', () => {
    const fn = () => 'x';
    expect(defineTool(fn)).toBe(fn);
  });
});

function call(catalog: Catalog, tool: string, args: Record<string, unknown>): ToolCall {
  const t = catalog.tools.get(tool)!;
  return {
    requestId: 'r1',
    service: catalog.services.get(t.service)!,
    tool: t,
    config: t.config,
    arguments: args,
    stream: false,
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    log: captureLogger().log,
  };
}

function descriptors(module: string, forecastArgs: unknown[]) {
  return [
    entry('tool-service', 'weather', service('weather', { 'config-params': [{ name: 'tool', required: true }], plugin: { kind: 'module', module } })),
    entry('tool', 'forecast', { name: 'forecast', service: 'weather', tool: 'forecast', 'plugin-options': { tool: 'forecast' }, arguments: forecastArgs }),
    entry('tool', 'fails', { name: 'fails', service: 'weather', tool: 'fails', 'plugin-options': { tool: 'fails' }, arguments: [] }),
  ];
}

const FORECAST_ARGS = [
  { name: 'city', type: 'string', required: true, description: 'City name' },
  { name: 'units', type: 'select', options: ['c', 'f'], default: 'c' },
  { name: 'days', type: 'number', min: 1, max: 7 },
  { name: 'where', type: 'object', input_schema: { type: 'object' } },
];

describe('a TypeScript module of typed tools', () => {
  const ctx = pluginContext(captureLogger().log, FIXTURES);
  const build = (entries: ReturnType<typeof descriptors>) => buildCatalog(entries, defaultRegistry(), ctx, { policy: new ExecPolicy('directory') });

  it('loads without a build step and calls each tool with validated arguments', async () => {
    const catalog = await build(descriptors('./weather.ts', FORECAST_ARGS));
    const plugin: Plugin = await modulePluginFactory.create(asServed(catalog.services.get('weather')), ctx);
    expect(await plugin.invoke(call(catalog, 'forecast', { city: 'Oslo', days: 2 }))).toBe('Oslo: 21°C in 2 day(s)');
    await expect(plugin.invoke(call(catalog, 'forecast', { city: '' }))).rejects.toMatchObject({
      code: ErrorCode.InvalidArguments,
      message: expect.stringContaining('city: Too small') as string,
    });
  });

  it('reports a descriptor that disagrees with the schema, naming the file and the argument', async () => {
    const stale = [
      { name: 'city', type: 'number', required: true },
      { name: 'units', type: 'select', options: ['c', 'k'] },
      { name: 'country', type: 'string' },
    ];
    const err = (await build(descriptors('./weather.ts', stale)).catch((e: unknown) => e)) as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.problems).toEqual([
      'tool/forecast.json: arguments: "city" is string in forecast\'s schema but number in the descriptor (regenerate the descriptors: toolwire module import)',
      'tool/forecast.json: arguments: "units" takes c|f in forecast\'s schema but c|k in the descriptor (regenerate the descriptors: toolwire module import)',
      'tool/forecast.json: arguments: "days" is in forecast\'s schema but not in the descriptor (regenerate the descriptors: toolwire module import)',
      'tool/forecast.json: arguments: "where" is in forecast\'s schema but not in the descriptor (regenerate the descriptors: toolwire module import)',
      'tool/forecast.json: arguments: "country" is in the descriptor but not in forecast\'s schema (regenerate the descriptors: toolwire module import)',
    ]);
  });

  it('puts a .ts module through the exec policy as a .js one', async () => {
    const err = (await buildCatalog(descriptors('./weather.ts', FORECAST_ARGS), defaultRegistry(), ctx, {
      policy: new ExecPolicy('directory', { moduleRoots: { any: false, items: ['/nowhere'] } }),
    }).catch((e: unknown) => e)) as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.problems.join('\n')).toMatch(/does not import "\.\/weather\.ts".*TOOLWIRE_MODULE_ROOTS/);
  });
});

describe("a typed tool's argument errors, as an agent reads them", () => {
  // The descriptors `toolwire module import` writes, served by a worker as any agent reaches it.
  const entries = [
    entry(
      'tool-service',
      'dist',
      service('dist', { 'config-params': [{ name: 'tool', required: true }], plugin: { kind: 'module', module: join(FIXTURES, 'distance.ts') } }),
    ),
    ...typedToolDescriptors([convert], { service: 'dist', prefix: '' }).map((d) => entry('tool', String(d['name']), d)),
  ];
  let fx: Fixture | undefined;
  let catalog: Catalog;
  beforeAll(async () => {
    catalog = await buildCatalog(entries, defaultRegistry(), pluginContext(captureLogger().log, FIXTURES), { policy: new ExecPolicy('directory') });
    fx = await startFixture(catalog, {}, 'non-persistent://tg/response/dist', {}, { createPlugin: pluginMaker(defaultRegistry()) });
  });
  afterAll(() => fx?.close());

  /** The worker's answer to a call of `convert`: its text, or `<type>: <message>`. */
  async function ask(args: Record<string, unknown>): Promise<string> {
    const id = await fx!.request('persistent://tg/flow/dist-request', args, { tool: 'convert' });
    const answer = await fx!.responses.final(id);
    const error = answer.find((r) => r.error)?.error;
    return error ? `${error.type}: ${error.message}` : answer.map((r) => r.response).join('');
  }

  /** What the tool's own test reads through runTool, in the same shape. */
  const tested = (args: Record<string, unknown>) =>
    runTool(convert, args).catch((err: unknown) => (err instanceof InvalidArgumentsError ? `${err.code}: ${err.message}` : Promise.reject(err)));

  it.each([
    [{ km: -3 }, 'invalid-arguments: invalid arguments for convert: km: distances are never negative'],
    [{ km: 5, unit: 'ft' }, 'invalid-arguments: invalid arguments for convert: unit: mi (miles) or nmi (nautical miles)'],
    [{ km: 'far' }, 'invalid-arguments: invalid arguments for convert: km: Invalid input: expected number, received string'],
    [{ km: 5, digits: 2.5 }, 'invalid-arguments: invalid arguments for convert: digits: Invalid input: expected int, received number'],
  ])('answers %j in the words of the schema, as runTool says them', async (args, words) => {
    expect(await ask(args)).toBe(words);
    expect(await tested(args)).toBe(words);
  });

  it('names every missing argument as missing from the call, in the worker and in runTool', async () => {
    expect(await ask({})).toBe('invalid-arguments: argument km is missing from the call');
    expect(await tested({})).toBe('invalid-arguments: argument km is missing from the call');
  });

  it('coerces a number sent as text, in the worker and in runTool alike', async () => {
    expect(await ask({ km: '5' })).toBe('3.11');
    expect(await tested({ km: '5' })).toBe('3.11');
  });

  it("shows the model zod's own JSON Schema: integers, bounds, defaults, enums", () => {
    const zods = z.toJSONSchema(convert.arguments, { io: 'input' }) as { properties: Record<string, Record<string, unknown>> };
    const seen = toolInputSchema(catalog.tools.get('convert')!.parameters);
    expect(seen.properties).toEqual(zods.properties);
    expect(seen.properties['digits']).toEqual({ type: 'integer', minimum: 0, maximum: 6, default: 2, description: 'Decimal places' });
    expect(seen.required).toEqual(['km']);
  });
});

describe('a TypeScript module that does not compile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'typed-'));
    await writeFile(join(dir, 'broken.ts'), 'export const x: number = ;\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is refused at the check, saying where', async () => {
    const problems = await modulePluginFactory.check!(
      asServed(
        (
          await buildCatalog(
            [entry('tool-service', 'b', service('b', { plugin: { kind: 'module', module: './broken.ts' } }))],
            defaultRegistry(),
            pluginContext(captureLogger().log, dir),
            { portable: true },
          )
        ).services.get('b'),
      ),
      [],
      pluginContext(captureLogger().log, dir),
    );
    expect(problems.join('\n')).toMatch(/broken\.ts:1:\d+/);
  });
});
