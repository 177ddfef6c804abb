/**
 * A command the operator allows still runs what its environment tells it to: NODE_OPTIONS
 * makes node import a data: URL first. The catalog build rules on the variables a descriptor
 * sets, and on its working directory, before the check starts anything.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../src/assembly/build-catalog.js';
import { ConfigError } from '../../../src/errors.js';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import type { PluginContext } from '../../../src/plugins/plugin.js';
import { ExecPolicy } from '../../../src/policy/exec-policy.js';
import { readExecRules } from '../../../src/policy/exec-rules.js';
import { loadSecrets } from '../../../src/secrets.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { captureLogger, entry } from '../../support/harness.js';

/** A real MCP server (the SDK's own classes), run by node. */
const WHOAMI = fileURLToPath(new URL('../../support/mcp-whoami-server.mjs', import.meta.url));
const problems = (p: Promise<unknown>) =>
  p.then(
    () => [],
    (err: unknown) => (err instanceof ConfigError ? err.problems : Promise.reject(err)),
  );

describe('the environment and working directory config gives an allowed command', () => {
  let dir: string;
  let ctx: PluginContext;
  const marker = () => join(dir, 'injected-ran');
  /** Code of the config writer's choosing, run by node before the server's own. */
  // Single quotes only: NODE_OPTIONS reads double quotes as its own.
  const injection = () => `--import=data:text/javascript,import{writeFileSync}from'node:fs';writeFileSync('${marker()}','x')`;
  const server = (plugin: Record<string, unknown>) =>
    entry(
      'tool-service',
      'whoami',
      service('whoami', { plugin: { kind: 'mcp', transport: 'stdio', command: process.execPath, args: [WHOAMI], ...plugin } }, { requests: 'non-persistent' }),
    );
  const remote = (env: Record<string, string> = {}) => new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_COMMANDS: process.execPath, ...env }).rules);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-command-env-'));
    ctx = { log: captureLogger('warn').log, configDir: dir, secrets: loadSecrets({}), settings: { PATH: process.env['PATH'] } };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('does not start an allowed command with NODE_OPTIONS from a remote source, and says which setting would allow it', async () => {
    const p = await problems(
      buildCatalog([server({ env: { NODE_OPTIONS: injection(), PYTHONSTARTUP: '/tmp/x.py' } })], defaultRegistry(), ctx, { policy: remote() }),
    );
    expect(p).toEqual([
      'tool-service/whoami.json: plugin.env: the worker does not set NODE_OPTIONS, PYTHONSTARTUP for ' +
        `${JSON.stringify(process.execPath)} for the TrustGraph config service (such variables can make a command run other code): TOOLWIRE_ALLOW_COMMAND_ENV is unset, which allows none for this source; add them to TOOLWIRE_ALLOW_COMMAND_ENV to allow it`,
    ]);
    expect(existsSync(marker())).toBe(false);
  });

  it('runs the injection when the operator lists the variable, or from the operator’s own directory', async () => {
    // The same descriptor does run the planted code once allowed: the refusal above is what stops it.
    const listed = await buildCatalog([server({ env: { NODE_OPTIONS: injection() } })], defaultRegistry(), ctx, {
      policy: remote({ TOOLWIRE_ALLOW_COMMAND_ENV: 'NODE_OPTIONS' }),
    });
    expect(listed.services.has('whoami')).toBe(true);
    expect(existsSync(marker())).toBe(true);
    await rm(marker());
    await buildCatalog([server({ env: { NODE_OPTIONS: injection() } })], defaultRegistry(), ctx, { policy: new ExecPolicy('directory') });
    expect(existsSync(marker())).toBe(true);
  });

  it('passes the variables the operator lists, and no other', async () => {
    const policy = remote({ TOOLWIRE_ALLOW_COMMAND_ENV: 'WHOAMI_*' });
    expect((await buildCatalog([server({ env: { WHOAMI_GREETING: 'hi' } })], defaultRegistry(), ctx, { policy })).services.has('whoami')).toBe(true);
    expect(
      await problems(buildCatalog([server({ env: { WHOAMI_GREETING: 'hi', LD_PRELOAD: '/nonexistent/x.so' } })], defaultRegistry(), ctx, { policy })),
    ).toEqual([expect.stringMatching(/plugin\.env: the worker does not set LD_PRELOAD for .*add it to TOOLWIRE_ALLOW_COMMAND_ENV/)]);
  });

  it('starts a remote source’s command only in a working directory under a module root', async () => {
    await mkdir(join(dir, 'servers', 'whoami'), { recursive: true });
    expect(await problems(buildCatalog([server({ cwd: dir })], defaultRegistry(), ctx, { policy: remote() }))).toEqual([
      expect.stringMatching(
        /^tool-service\/whoami\.json: plugin\.cwd: the worker does not start a command in ".*toolwire-command-env-[^"]*" for the TrustGraph config service: interpreters load code from their working directory, so it must be under a directory of TOOLWIRE_MODULE_ROOTS; TOOLWIRE_MODULE_ROOTS is unset/,
      ),
    ]);
    const rooted = remote({ TOOLWIRE_MODULE_ROOTS: join(dir, 'servers') });
    expect(await problems(buildCatalog([server({ cwd: '..' })], defaultRegistry(), ctx, { policy: rooted }))).toHaveLength(1);
    expect((await buildCatalog([server({ cwd: 'servers/whoami' })], defaultRegistry(), ctx, { policy: rooted })).services.has('whoami')).toBe(true);
  });
});
