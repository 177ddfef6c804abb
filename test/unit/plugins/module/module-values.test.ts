import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolService } from '../../../../src/catalog/descriptors.js';
import { modulePluginFactory } from '../../../../src/plugins/module/module-plugin.js';
import type { Plugin, ToolCall } from '../../../../src/plugins/plugin.js';
import { isAsyncIterable } from '../../../../src/plugins/plugin.js';
import { asServed, captureLogger } from '../../../support/harness.js';

// One rule for a module tool's values, whole or streamed (envelope/response.ts observationText).
const MODULE = `
export const none = () => null;
export const nothing = () => undefined;
export const bytes = () => Buffer.from('héllo');
export const object = () => ({ a: [1, null] });
export async function* chunks() { yield null; yield Buffer.from('b'); yield { c: 1 }; yield 'd'; }
export const later = async () => ({ a: 2 });
export const thenable = () => ({ then: (ok) => ok('kept its word') });
export const context = (ctx) => {
  const { signal, log, user } = ctx;
  return { keys: Object.keys(ctx).sort(), signal: signal instanceof AbortSignal, log: typeof log.info === 'function', user: user ?? null, hasUser: 'user' in ctx };
};
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tw-module-values-'));
  await writeFile(join(dir, 'values.mjs'), MODULE);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function pluginFor(exportName: string): Promise<Plugin> {
  const { log } = captureLogger();
  const service = {
    id: 'values',
    source: 'test',
    plugin: { kind: 'module', options: { module: './values.mjs', export: exportName } },
  } as unknown as ToolService;
  return modulePluginFactory.create(asServed(service), { log, configDir: dir, secrets: new Map() as never, settings: {} });
}

async function textsOf(plugin: Plugin): Promise<string[]> {
  const out = plugin.invoke(callOf());
  if (!isAsyncIterable(out)) return [await out];
  const texts: string[] = [];
  for await (const t of out) texts.push(t);
  return texts;
}

function callOf(over: Partial<ToolCall> = {}): ToolCall {
  const { log } = captureLogger();
  return {
    ...over,
    requestId: 'r',
    service: {} as ToolService,
    tool: undefined,
    config: {},
    arguments: {},
    stream: true,
    signal: new AbortController().signal,
    log,
  } as ToolCall;
}

describe('module tool values as observation text', () => {
  it.each([
    ['none', ['']],
    ['nothing', ['']],
    ['bytes', ['héllo']],
    ['object', ['{"a":[1,null]}']],
    ['chunks', ['', 'b', '{"c":1}', 'd']],
    ['later', ['{"a":2}']],
    ['thenable', ['kept its word']],
  ])('%s', async (name, expected) => {
    expect(await textsOf(await pluginFor(name))).toEqual(expected);
  });

  it('gives the tool its call, the signal and the logger read from the context, and nothing of the worker', async () => {
    const plugin = await pluginFor('context');
    const keys = ['arguments', 'config', 'requestId', 'service', 'tool'];
    expect(JSON.parse(plugin.invoke(callOf()) as string)).toEqual({ keys, signal: true, log: true, user: null, hasUser: false });
    expect(JSON.parse(plugin.invoke(callOf({ user: 'ada' })) as string)).toEqual({
      keys: [...keys, 'user'].sort(),
      signal: true,
      log: true,
      user: 'ada',
      hasUser: true,
    });
  });

  it('is the text itself when the tool answers synchronously, and a promise only when it answers later', async () => {
    // The worker writes a text at once, with no deadline timer or abort race (plugin.ts Observation).
    expect((await pluginFor('object')).invoke(callOf())).toBe('{"a":[1,null]}');
    expect((await pluginFor('none')).invoke(callOf())).toBe('');
    expect((await pluginFor('later')).invoke(callOf())).toBeInstanceOf(Promise);
    expect((await pluginFor('thenable')).invoke(callOf())).toBeInstanceOf(Promise);
  });
});

describe('a module plugin named as a package', () => {
  it('resolves from the config directory, where the operator installed it, not from toolwire', async () => {
    const pkg = join(dir, 'node_modules', 'operator-tools');
    await mkdir(pkg, { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'operator-tools', type: 'module', exports: './index.js' }));
    await writeFile(join(pkg, 'index.js'), 'export const greet = ({ arguments: a }) => `hello ${a.name}`;\n');
    const { log } = captureLogger();
    const service = { id: 'pkg', source: 'test', plugin: { kind: 'module', options: { module: 'operator-tools', export: 'greet' } } } as unknown as ToolService;
    const plugin: Plugin = await modulePluginFactory.create(asServed(service), { log, configDir: dir, secrets: new Map() as never, settings: {} });
    const call = {
      requestId: 'r',
      service,
      tool: undefined,
      config: {},
      arguments: { name: 'ops' },
      stream: false,
      timeoutMs: 120_000,
      signal: new AbortController().signal,
      log,
    } as ToolCall;
    expect(await plugin.invoke(call)).toBe('hello ops');
    await expect(
      modulePluginFactory.create(asServed({ ...service, plugin: { kind: 'module', options: { module: 'not-installed-anywhere', export: 'default' } } }), {
        log,
        configDir: dir,
        secrets: new Map() as never,
        settings: {},
      }),
    ).rejects.toThrow(/cannot find package "not-installed-anywhere" from/);
  });
});
