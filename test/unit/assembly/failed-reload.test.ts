/**
 * A reload the worker could not apply leaves the plugins that serve as they were: a later
 * check of an unchanged service is handed the plugin still serving it, never the one the
 * failed apply made and closed.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startApp, type App } from '../../../src/assembly/app.js';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import type { Plugin } from '../../../src/plugins/plugin.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { serviceDescriptor, toolDescriptor } from '../../support/descriptors.js';
import { captureLogger } from '../../support/harness.js';
import { waitUntil } from '../../support/pulsar-app.js';

const service = (id: string, behaviour: string) =>
  JSON.stringify(serviceDescriptor(id, { 'config-params': [{ name: 'which', required: false }], plugin: { kind: 'test', behaviour } }));
const tool = (name: string) => JSON.stringify(toolDescriptor(name, 'a-svc', { which: name }));

describe('a reload whose apply fails', () => {
  let dir: string;
  let app: App | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-failed-reload-'));
    await mkdir(join(dir, 'tool-service'));
    await mkdir(join(dir, 'tool'));
  });
  afterEach(async () => {
    await app?.stop(100);
    await rm(dir, { recursive: true, force: true });
  });

  it('hands a later check the plugin still serving, not the one the failed apply closed', { timeout: 60_000 }, async () => {
    const created: { behaviour: string; plugin: Plugin; closed: boolean }[] = [];
    const checked: (Plugin | undefined)[] = [];
    const registry = defaultRegistry();
    registry.register({
      kind: 'test',
      serviceOptions: z.object({ behaviour: z.string() }),
      check: async (s, tools, _ctx, running) => {
        if (s.id === 'a-svc' && tools.some((t) => t.name === 'second')) checked.push(running);
        return [];
      },
      create: async (s) => {
        const { behaviour } = s.plugin.options;
        if (behaviour === 'fail') throw new Error('backend unreachable');
        const made = { behaviour, closed: false, plugin: undefined as unknown as Plugin };
        made.plugin = { kind: 'test', invoke: async () => behaviour, close: async () => void (made.closed = true) };
        created.push(made);
        return made.plugin;
      },
    });
    await writeFile(join(dir, 'tool-service', 'a-svc.json'), service('a-svc', 'first'));
    await writeFile(join(dir, 'tool', 'first.json'), tool('first'));
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONFIG_POLL_MS: '0' });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger('fatal').log, registry });
    const serving = created[0]!.plugin;
    // a-svc changes and a service that cannot start joins: the apply makes a-svc's new plugin, then fails and closes it.
    await writeFile(join(dir, 'tool-service', 'z-svc.json'), service('z-svc', 'fail'));
    await writeFile(join(dir, 'tool-service', 'a-svc.json'), service('a-svc', 'second'));
    await waitUntil(() => created.some((c) => c.behaviour === 'second' && c.closed), 20_000, 'the failed apply closed the plugin it made');
    // a-svc as it is served again, with one more tool: its check may ask the plugin serving it.
    await writeFile(join(dir, 'tool-service', 'a-svc.json'), service('a-svc', 'first'));
    await writeFile(join(dir, 'tool', 'second.json'), tool('second'));
    await waitUntil(() => checked.length > 0, 20_000, 'a-svc checked with its new tool');
    expect(checked[0]).toBe(serving);
  });
});
