import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { catalogOf, entry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';

const joke = service('joke-service', { 'config-params': [{ name: 'style', required: true }], plugin: { kind: 'module', module: 'builtin:joke' } });
const tellJoke = {
  type: 'tool-service',
  name: 'tell-joke',
  description: 'd',
  service: 'joke-service',
  style: 'pun',
  arguments: [{ name: 'topic', type: 'string', description: 'The topic' }],
};

async function problems(...entries: Parameters<typeof catalogOf>[0]): Promise<string[]> {
  try {
    await catalogOf(entries);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems as string[];
    throw err;
  }
  return [];
}

describe('buildCatalog', () => {
  it('accepts TrustGraph descriptors and keeps unknown keys', async () => {
    const c = await catalogOf([
      entry('tool-service', 'joke-service', { ...joke, 'x-team': 'a' }),
      entry('tool', 'tell-joke', { ...tellJoke, group: ['fun'], state: 's', 'applicable-states': ['s'] }),
    ]);
    const s = c.services.get('joke-service')!;
    expect(s.subscription).toBe('joke-service-request');
    expect(s.stream).toBe('single');
    expect(s.raw['x-team']).toBe('a');
    const t = c.tools.get('tell-joke')!;
    expect(t.config).toEqual({ style: 'pun' });
    expect(t.parameters[0]).toMatchObject({ name: 'topic', type: 'string', form: 'llm', required: false });
  });

  it('accepts config-params as plain strings and the short topic form', async () => {
    const c = await catalogOf([
      entry('tool-service', 's', { id: 's', 'request-queue': 'request:tg:s', 'response-queue': 'response:tg:s', 'config-params': ['style'] }),
    ]);
    const s = c.services.get('s')!;
    expect(s.configParams).toEqual([{ name: 'style', required: false }]);
    expect(s.requestQueue).toBe('non-persistent://tg/request/s');
  });

  it('names the file and field of an unknown service', async () => {
    expect(await problems(entry('tool-service', 'joke-service', joke), entry('tool', 't', { ...tellJoke, service: 'nope' }))).toEqual([
      'tool/t.json: service: unknown tool-service "nope" (known: joke-service)',
    ]);
  });

  it('reports a missing required config value', async () => {
    const { style: _style, ...noStyle } = tellJoke;
    expect(await problems(entry('tool-service', 'joke-service', joke), entry('tool', 't', noStyle))).toEqual([
      'tool/t.json: style: required by the config-params of service joke-service, but missing',
    ]);
  });

  it('reports duplicate tool names with both files', async () => {
    const p = await problems(entry('tool-service', 'joke-service', joke), entry('tool', 'a', tellJoke), entry('tool', 'b', { ...tellJoke, style: 'dad-joke' }));
    expect(p).toEqual(['tool/b.json: name: duplicate tool name "tell-joke" (also in tool/a.json)']);
  });

  it('reports malformed topic names', async () => {
    const p = await problems(entry('tool-service', 's', service('s', { 'request-queue': 'persistent://only-two/parts' })));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^tool-service\/s\.json: request-queue: malformed topic "persistent:\/\/only-two\/parts"/);
  });

  it('reports an unknown plugin with the ones available', async () => {
    expect(await problems(entry('tool-service', 's', service('s', { plugin: { kind: 'telepathy' } })))).toEqual([
      expect.stringMatching(/^tool-service\/s\.json: plugin\.kind: unknown plugin "telepathy" \(available: .*module.*\)$/),
    ]);
  });

  it('reports a module that does not exist', async () => {
    const p = await problems(entry('tool-service', 's', service('s', { plugin: { kind: 'module', module: 'builtin:nothing' } })));
    expect(p[0]).toMatch(/^tool-service\/s\.json: plugin\.module: unknown builtin module "nothing"/);
  });

  it("reports a required hidden parameter without a value, in Dify's words", async () => {
    const p = await problems(
      entry('tool-service', 'joke-service', joke),
      entry('tool', 't', { ...tellJoke, arguments: [{ name: 'api_region', type: 'string', form: 'form', required: true }] }),
    );
    expect(p).toEqual(["tool/t.json: runtime-parameters: Tool 'tell-joke' requires non-LLM runtime_parameters for: api_region."]);
  });

  it('names the field of a schema error, with the array index', async () => {
    const p = await problems(entry('tool-service', 'joke-service', joke), entry('tool', 't', { ...tellJoke, arguments: [{ name: 'x', type: 'telepathic' }] }));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^tool\/t\.json: arguments\[0\]\.type: unknown parameter type "telepathic"/);
  });

  it('reports two tools a service could not tell apart', async () => {
    const p = await problems(entry('tool-service', 'joke-service', joke), entry('tool', 'a', tellJoke), entry('tool', 'b', { ...tellJoke, name: 'other' }));
    expect(p).toEqual(['tool/b.json: style: same config values as tool/a.json; service joke-service could not tell their requests apart']);
  });

  it('reports a file that does not parse', async () => {
    expect(await problems({ type: 'tool', key: 'x', value: undefined, error: 'not valid JSON: Unexpected token', source: 'tool/x.json' })).toEqual([
      'tool/x.json: not valid JSON: Unexpected token',
    ]);
  });

  it('collects every problem at once', async () => {
    const p = await problems(
      entry('tool-service', 's', service('s', { 'response-queue': 'bad', plugin: { kind: 'nope' } })),
      entry('tool', 't', { ...tellJoke, service: 'missing' }),
    );
    expect(p.length).toBe(3);
  });

  // Found by descriptors.property.test.ts: a tool without the key read the value every object
  // inherits (`Object`, a function) and passed the required check; `__proto__` lost its value.
  it('reads config values a tool has itself, never inherited ones, and refuses a config-param named __proto__', async () => {
    const inherits = service('inherits', {
      'config-params': [{ name: 'constructor', required: true }, 'toString'],
      plugin: { kind: 'module', module: 'builtin:joke' },
    });
    expect(await problems(entry('tool-service', 'inherits', inherits), entry('tool', 't', { name: 't', service: 'inherits' }))).toEqual([
      'tool/t.json: constructor: required by the config-params of service inherits, but missing',
    ]);
    const c = await catalogOf([entry('tool-service', 'inherits', inherits), entry('tool', 't', { name: 't', service: 'inherits', constructor: 'c' })]);
    expect(c.tools.get('t')!.config).toEqual({ constructor: 'c' });
    const proto = service('proto', { 'config-params': ['__proto__'] });
    expect(await problems(entry('tool-service', 'proto', proto))).toEqual([expect.stringMatching(/config-params\[0\].*__proto__/)]);
  });
});

describe('Catalog.resolve', () => {
  it('picks the tool by its config values, or by name', async () => {
    const c = await catalogOf([
      entry('tool-service', 'joke-service', joke),
      entry('tool', 'a', tellJoke),
      entry('tool', 'b', { ...tellJoke, name: 'dad', style: 'dad-joke' }),
    ]);
    const s = c.services.get('joke-service')!;
    expect(c.resolve(s, { style: 'dad-joke' }).tool?.name).toBe('dad');
    expect(c.resolve(s, { style: 'pun' }, 'dad').tool?.name).toBe('dad');
    expect(() => c.resolve(s, { style: 'limerick' })).toThrow(/no tool of service joke-service has config {"style":"limerick"}/);
    expect(() => c.resolve(s, {}, 'ghost')).toThrow(/there is no tool named "ghost"/);
  });

  it('lets a service without tool descriptors answer any request with its required config', async () => {
    const c = await catalogOf([entry('tool-service', 'joke-service', joke)]);
    const s = c.services.get('joke-service')!;
    expect(c.resolve(s, { style: 'pun', stray: 1 })).toEqual({ tool: undefined, config: { style: 'pun' } });
    expect(() => c.resolve(s, {})).toThrow(/missing required config value\(s\) style/);
  });

  // Found by descriptors.property.test.ts: a request without the value passed with the one its object inherits.
  it('does not take an inherited value for a config-param named like an Object method', async () => {
    const c = await catalogOf([entry('tool-service', 's', service('s', { 'config-params': [{ name: 'toString', required: true }, 'valueOf'] }))]);
    const s = c.services.get('s')!;
    expect(() => c.resolve(s, {})).toThrow(/missing required config value\(s\) toString/);
    expect(c.resolve(s, { toString: 'x' })).toEqual({ tool: undefined, config: { toString: 'x' } });
  });
});
