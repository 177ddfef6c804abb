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
  const { log } = captureLogger();
  const call = {
    requestId: 'r',
    service: {} as ToolService,
    tool: undefined,
    config: {},
    arguments: {},
    stream: true,
    signal: new AbortController().signal,
    log,
  } as ToolCall;
  const out = plugin.invoke(call);
  if (!isAsyncIterable(out)) return [await out];
  const texts: string[] = [];
  for await (const t of out) texts.push(t);
  return texts;
}

describe('module tool values as observation text', () => {
  it.each([
    ['none', ['']],
    ['nothing', ['']],
    ['bytes', ['héllo']],
    ['object', ['{"a":[1,null]}']],
    ['chunks', ['', 'b', '{"c":1}', 'd']],
  ])('%s', async (name, expected) => {
    expect(await textsOf(await pluginFor(name))).toEqual(expected);
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
      modulePluginFactory.create(
        asServed({ ...service, plugin: { kind: 'module', options: { module: 'not-installed-anywhere', export: 'default' } } } as unknown as ToolService),
        { log, configDir: dir, secrets: new Map() as never, settings: {} },
      ),
    ).rejects.toThrow(/cannot find package "not-installed-anywhere" from/);
  });
});
