/**
 * A module's revision re-imports it (its top-level code runs again) and type checks a .ts one
 * with a `typescript` found beside it: only `run --watch` on the operator's directory sets it.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp } from '../../../../src/assembly/app.js';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import type { ConfigSource } from '../../../../src/config/config-source.js';
import type { ConfigEntry } from '../../../../src/config/config-store.js';
import { ConfigError } from '../../../../src/errors.js';
import { defaultRegistry } from '../../../../src/plugins/default-registry.js';
import { watchRevision } from '../../../../src/plugins/module/module-revision.js';
import { ModuleWatchSource } from '../../../../src/plugins/module/module-watch-source.js';
import type { PluginContext } from '../../../../src/plugins/plugin.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';
import { readExecRules } from '../../../../src/policy/exec-rules.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { readSettings } from '../../../../src/settings.js';
import { MemoryTransport } from '../../../../src/transport/memory-transport.js';
import { captureLogger, entry } from '../../../support/harness.js';

const queues = (id: string) => ({ 'request-queue': `non-persistent://tg/request/${id}`, 'response-queue': `non-persistent://tg/response/${id}` });
const problems = (p: Promise<unknown>) =>
  p.then(
    () => [],
    (err: unknown) => (err instanceof ConfigError ? err.problems : Promise.reject(err)),
  );

describe('a module revision', () => {
  let dir: string;
  let ctx: PluginContext;
  const counter = () => join(dir, 'imports');
  const service = (id: string, plugin: Record<string, unknown>) => entry('tool-service', id, { id, ...queues(id), plugin: { kind: 'module', ...plugin } });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-revision-'));
    await mkdir(join(dir, 'tools'));
    // Each import appends a line: how often its top-level code ran.
    await writeFile(
      join(dir, 'tools', 'count.mjs'),
      `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(counter())}, 'x\\n');\nexport default () => 'ok';\n`,
    );
    ctx = { log: captureLogger('warn').log, configDir: dir, secrets: loadSecrets({}), settings: {} };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is refused from config: a writer cannot make the worker import a module again', async () => {
    const policy = new ExecPolicy('directory');
    const p = await problems(buildCatalog([service('count', { module: './tools/count.mjs', revision: 'r1' })], defaultRegistry(), ctx, { policy }));
    expect(p).toEqual([expect.stringMatching(/^tool-service\/count\.json: plugin\.revision: .*set by toolwire run --watch only/)]);
    expect(existsSync(counter())).toBe(false);
  });

  it('is what run --watch stamps, and its watch ends when no descriptor names the module', async () => {
    let entries: ConfigEntry[] = [service('count', { module: './tools/count.mjs' })];
    const inner: ConfigSource = {
      description: 'test',
      watch: () => Promise.resolve(),
      read: () => Promise.resolve({ version: String(entries.length), entries }),
      close: () => Promise.resolve(),
    };
    const source = new ModuleWatchSource(inner, dir, captureLogger('warn').log);
    try {
      const snap = await source.read();
      expect((snap.entries[0]!.value as { plugin: { revision: string } }).plugin.revision).toBe(watchRevision(0));
      const catalog = await buildCatalog(snap.entries, defaultRegistry(), ctx, { policy: new ExecPolicy('directory') });
      expect(catalog.services.has('count')).toBe(true);
      expect(source.watchedDirs()).toEqual([join(dir, 'tools')]);
      entries = [];
      await source.read();
      expect(source.watchedDirs()).toEqual([]);
    } finally {
      await source.close();
    }
  });

  it('is refused at start with a config service: --watch would watch what a remote writer names', async () => {
    const settings = readSettings({ TOOLWIRE_CONFIG_SOURCE: 'trustgraph', TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: 'off' });
    const err = await startApp({
      settings,
      transport: new MemoryTransport(),
      secrets: loadSecrets({}),
      log: captureLogger('warn').log,
      watchModules: true,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([expect.stringMatching(/^run --watch watches modules of a config directory only/)]);
  });

  it('type checks a .ts module only with a typescript the module roots hold', async () => {
    await mkdir(join(dir, 'roots', 'tools'), { recursive: true });
    await writeFile(join(dir, 'roots', 'tools', 'tool.ts'), `export default (): string => 'ok';\n`);
    // A "typescript" above the roots, planted: importing it runs its code.
    await mkdir(join(dir, 'node_modules', 'typescript'), { recursive: true });
    await writeFile(join(dir, 'node_modules', 'typescript', 'package.json'), JSON.stringify({ name: 'typescript', type: 'module', main: 'index.js' }));
    await writeFile(
      join(dir, 'node_modules', 'typescript', 'index.js'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(dir, 'ts-ran'))}, 'x');\nexport default {};\n`,
    );
    const policy = new ExecPolicy('directory', readExecRules({ TOOLWIRE_MODULE_ROOTS: join(dir, 'roots') }).rules);
    // What the import of the module itself says is not at stake here (the test runner loads .ts its own way).
    await buildCatalog([service('typed', { module: './roots/tools/tool.ts', revision: watchRevision(0) })], defaultRegistry(), ctx, { policy }).catch(
      () => undefined,
    );
    expect(existsSync(join(dir, 'ts-ran'))).toBe(false);
  });
});
