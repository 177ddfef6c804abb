/**
 * The catalog build puts what descriptors would execute to the exec policy before any plugin
 * check runs: real MCP stdio commands and module files that leave a marker when they run.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp } from '../../../src/assembly/app.js';
import { buildCatalog } from '../../../src/assembly/build-catalog.js';
import { ConfigError } from '../../../src/errors.js';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import type { PluginContext } from '../../../src/plugins/plugin.js';
import { ExecPolicy } from '../../../src/policy/exec-policy.js';
import { readExecRules } from '../../../src/policy/exec-rules.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { serviceDescriptor, toolDescriptor, type ServiceDescriptor } from '../../support/descriptors.js';
import { captureLogger, entry } from '../../support/harness.js';

/** A tool-service entry on non-persistent://tg/request/<id> and non-persistent://tg/response/<id>. */
const service = (id: string, fields: Partial<ServiceDescriptor>) => entry('tool-service', id, serviceDescriptor(id, fields, { requests: 'non-persistent' }));

describe('the exec policy in the catalog build', () => {
  let dir: string;
  let ctx: PluginContext;
  const marker = (name: string) => join(dir, `${name}-ran`);
  const shell = (id: string) => service(id, { plugin: { kind: 'mcp', transport: 'stdio', command: '/bin/sh', args: ['-c', `id > ${marker(id)}`] } });
  const planted = (id: string, file: string) => service(id, { plugin: { kind: 'module', module: file } });
  const problems = (p: Promise<unknown>) =>
    p.then(
      () => [],
      (err: unknown) => (err instanceof ConfigError ? err.problems : Promise.reject(err)),
    );

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-exec-gate-'));
    await mkdir(join(dir, 'roots', 'tools'), { recursive: true });
    for (const [file, name] of [
      [join(dir, 'plant.mjs'), 'plant'],
      [join(dir, 'roots', 'tools', 'ok.mjs'), 'ok'],
    ] as const) {
      await writeFile(
        file,
        `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker(name))}, 'imported');\nexport default () => '${name}';\n`,
      );
    }
    ctx = { log: captureLogger('warn').log, configDir: dir, secrets: loadSecrets({}), settings: { PATH: process.env['PATH'] } };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts no command and imports no file a remote source may not use', async () => {
    const p = await problems(
      buildCatalog([shell('sh'), planted('plant', join(dir, 'plant.mjs'))], defaultRegistry(), ctx, { policy: new ExecPolicy('trustgraph') }),
    );
    expect(p).toEqual([
      expect.stringMatching(
        /^tool-service\/sh\.json: plugin\.command: the worker does not start "\/bin\/sh" for the TrustGraph config service: TOOLWIRE_ALLOW_COMMANDS is unset/,
      ),
      expect.stringMatching(/^tool-service\/plant\.json: plugin\.module: the worker does not import ".*plant\.mjs" .*TOOLWIRE_MODULE_ROOTS is unset/),
    ]);
    expect(existsSync(marker('sh'))).toBe(false);
    expect(existsSync(marker('plant'))).toBe(false);
  });

  it('runs the same descriptors from the operator’s directory, as before', async () => {
    const p = await problems(
      buildCatalog([shell('sh'), planted('plant', join(dir, 'plant.mjs'))], defaultRegistry(), ctx, { policy: new ExecPolicy('directory') }),
    );
    // The shell is no MCP server: its check fails, after it ran.
    expect(p).toEqual([expect.stringMatching(/^tool-service\/sh\.json: plugin: the MCP server does not answer initialize/)]);
    expect(existsSync(marker('sh'))).toBe(true);
    expect(existsSync(marker('plant'))).toBe(true);
  });

  it('runs no check of a change the policy refuses, not even of the services it allows', async () => {
    const policy = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_MODULE_ROOTS: join(dir, 'roots') }).rules);
    const p = await problems(buildCatalog([planted('ok', join(dir, 'roots', 'tools', 'ok.mjs')), shell('sh')], defaultRegistry(), ctx, { policy }));
    expect(p).toEqual([expect.stringMatching(/tool-service\/sh\.json: plugin\.command/)]);
    expect(existsSync(marker('ok'))).toBe(false);
    // Alone, the allowed module is imported (by its check) and served.
    const catalog = await buildCatalog([planted('ok', join(dir, 'roots', 'tools', 'ok.mjs'))], defaultRegistry(), ctx, { policy });
    expect(catalog.services.has('ok')).toBe(true);
    expect(existsSync(marker('ok'))).toBe(true);
  });

  it('imports no package resolved outside the roots, nor a data: URL', async () => {
    await mkdir(join(dir, 'node_modules', 'planted-pkg'), { recursive: true });
    await writeFile(join(dir, 'node_modules', 'planted-pkg', 'package.json'), JSON.stringify({ name: 'planted-pkg', type: 'module', main: 'index.js' }));
    await writeFile(
      join(dir, 'node_modules', 'planted-pkg', 'index.js'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker('pkg'))}, 'imported');\nexport default () => 'pkg';\n`,
    );
    const policy = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_MODULE_ROOTS: join(dir, 'roots') }).rules);
    const dataUrl = `data:text/javascript,import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(marker('data'))}, 'x'); export default () => 1;`;
    const p = await problems(buildCatalog([planted('pkg', 'planted-pkg'), planted('data', dataUrl)], defaultRegistry(), ctx, { policy }));
    expect(p).toEqual([
      expect.stringMatching(/^tool-service\/pkg\.json: plugin\.module: the worker does not import "planted-pkg" \(.*node_modules\/planted-pkg\/index\.js\)/),
      expect.stringMatching(/^tool-service\/data\.json: plugin\.module: "data:text\/javascript,.*" is not found/),
    ]);
    // From the operator's directory, a data: URL is no package either.
    const open = await problems(buildCatalog([planted('data', dataUrl)], defaultRegistry(), ctx, { policy: new ExecPolicy('directory') }));
    expect(open).toEqual([expect.stringMatching(/^tool-service\/data\.json: plugin\.module: cannot find package "data:/)]);
    expect(existsSync(marker('pkg'))).toBe(false);
    expect(existsSync(marker('data'))).toBe(false);
  });

  it('runs no Dify plugin locally that the list does not name', async () => {
    const slim = service('slim', { 'config-params': ['t'], plugin: { kind: 'dify-slim', provider: 'p', plugin_unique_identifier: 'langgenius/ok:1.0@abc' } });
    const tool = entry('tool', 'other', toolDescriptor('other', 'slim', { t: 'x', 'plugin-options': { plugin_unique_identifier: 'someone/else:1.0@def' } }));
    const local = { ...ctx, settings: { DIFY_SLIM_MODE: 'local', DIFY_SLIM_PATH: '/nonexistent/slim', DIFY_SLIM_FOLDER: dir } };
    const policy = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_SLIM_PLUGINS: 'langgenius/*' }).rules);
    expect(await problems(buildCatalog([slim, tool], defaultRegistry(), local, { policy }))).toEqual([
      expect.stringMatching(
        /^tool\/other\.json: plugin-options\.plugin_unique_identifier: the worker does not run Dify plugin "someone\/else:1\.0@def" on this machine \(DIFY_SLIM_MODE=local\) .*TOOLWIRE_ALLOW_SLIM_PLUGINS/,
      ),
    ]);
    // In remote mode the daemon runs the plugin, not this machine.
    const remote = { ...ctx, settings: { DIFY_SLIM_PATH: '/nonexistent/slim', DIFY_DAEMON_URL: 'http://127.0.0.1:1', DIFY_DAEMON_KEY: 'k' } };
    expect(await problems(buildCatalog([slim, tool], defaultRegistry(), remote, { policy: new ExecPolicy('trustgraph') }))).toEqual([]);
  });

  it('rules on the command file that starts: a relative command is resolved from MCP_STDIO_CWD when the descriptor names no cwd', async () => {
    const base = await realpath(dir);
    await mkdir(join(base, 'a', 'conf'), { recursive: true });
    await mkdir(join(base, 'b', 'run'), { recursive: true });
    for (const side of ['a', 'b']) await writeFile(join(base, side, 'server'), `#!/bin/sh\nid > ${marker(side)}\n`, { mode: 0o755 });
    const relative = service('rel', { plugin: { kind: 'mcp', transport: 'stdio', command: '../server' } });
    const stdio = { ...ctx, configDir: join(base, 'a', 'conf'), settings: { ...ctx.settings, MCP_STDIO_CWD: join(base, 'b', 'run') } };
    const allowing = (file: string) => new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_COMMANDS: file }).rules);
    // Allowing a/server (beside the config directory) does not allow the b/server that would run.
    expect(await problems(buildCatalog([relative], defaultRegistry(), stdio, { policy: allowing(join(base, 'a', 'server')) }))).toEqual([
      expect.stringMatching(
        /^tool-service\/rel\.json: plugin\.command: the worker does not start "\.\.\/server" \(.*\/b\/server\) for the TrustGraph config service/,
      ),
    ]);
    expect(existsSync(marker('a')) || existsSync(marker('b'))).toBe(false);
    // Allowing b/server starts b/server, and nothing else.
    expect(await problems(buildCatalog([relative], defaultRegistry(), stdio, { policy: allowing(join(base, 'b', 'server')) }))).toEqual([
      expect.stringMatching(/plugin: the MCP server does not answer initialize/),
    ]);
    expect(existsSync(marker('b'))).toBe(true);
    expect(existsSync(marker('a'))).toBe(false);
  });

  it('refuses a plugin kind the worker does not allow', async () => {
    const policy = new ExecPolicy('directory', readExecRules({ TOOLWIRE_ALLOW_PLUGINS: 'openapi' }).rules);
    expect(await problems(buildCatalog([shell('sh')], defaultRegistry(), ctx, { policy }))).toEqual([
      'tool-service/sh.json: plugin.kind: plugin kind "mcp" is not allowed on this worker for the config directory: add it to TOOLWIRE_ALLOW_PLUGINS to allow it',
    ]);
    expect(existsSync(marker('sh'))).toBe(false);
  });

  it('holds a worker on its own directory to the settings in its environment', async () => {
    await mkdir(join(dir, 'tool-service'));
    await writeFile(join(dir, 'tool-service', 'sh.json'), JSON.stringify(shell('sh').value));
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONFIG_POLL_MS: '0', TOOLWIRE_ALLOW_COMMANDS: 'npx' });
    const err = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger('warn').log }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(/sh\.json: plugin\.command: the worker does not start "\/bin\/sh" for the config directory: add it to TOOLWIRE_ALLOW_COMMANDS/),
    ]);
    expect(existsSync(marker('sh'))).toBe(false);
  });
});
