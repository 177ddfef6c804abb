import { mkdtemp, mkdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecPolicy, type Execution } from '../../../src/policy/exec-policy.js';
import { readExecRules } from '../../../src/policy/exec-rules.js';
import { readSettings } from '../../../src/settings.js';

const command = (c: string, path?: string): Execution => ({ type: 'command', where: 'tool-service/s.json: plugin.command', command: c, path });
const module = (file: string | undefined, specifier = file ?? 'pkg'): Execution => ({
  type: 'module',
  where: 'tool-service/s.json: plugin.module',
  specifier,
  file,
});
const slim = (id: string): Execution => ({ type: 'slim-plugin', where: 'tool/t.json: plugin-options.plugin_unique_identifier', id });

describe('reading the exec settings', () => {
  it('leaves unset settings to the source, reads * as anything and empty or none as nothing', () => {
    expect(readExecRules({})).toEqual({
      rules: { plugins: undefined, commands: undefined, moduleRoots: undefined, slimPlugins: undefined, commandEnv: undefined, privateNetworks: undefined },
      problems: [],
    });
    const { rules, problems } = readExecRules({
      TOOLWIRE_ALLOW_PLUGINS: ' mcp, openapi ',
      TOOLWIRE_ALLOW_COMMANDS: '*',
      TOOLWIRE_MODULE_ROOTS: '',
      TOOLWIRE_ALLOW_SLIM_PLUGINS: 'none',
    });
    expect(problems).toEqual([]);
    expect(rules).toMatchObject({
      plugins: { any: false, items: ['mcp', 'openapi'] },
      commands: { any: true },
      moduleRoots: { any: false, items: [] },
      slimPlugins: { any: false, items: [] },
    });
  });

  it('normalizes absolute paths and refuses what would mean a different thing elsewhere', () => {
    expect(readExecRules({ TOOLWIRE_ALLOW_COMMANDS: 'npx,/usr/bin/../bin/uvx', TOOLWIRE_MODULE_ROOTS: '/opt/tools/' }).rules).toMatchObject({
      commands: { items: ['npx', '/usr/bin/uvx'] },
      moduleRoots: { items: ['/opt/tools/'] },
    });
    expect(readExecRules({ TOOLWIRE_ALLOW_COMMANDS: './server.sh', TOOLWIRE_MODULE_ROOTS: 'tools', TOOLWIRE_ALLOW_PLUGINS: 'mcp,*' }).problems).toEqual([
      'TOOLWIRE_ALLOW_PLUGINS: * allows everything, so it stands alone',
      'TOOLWIRE_ALLOW_COMMANDS: "./server.sh" is neither an absolute path nor a command name (a relative path would mean a different file in each working directory)',
      'TOOLWIRE_MODULE_ROOTS: "tools" is not an absolute path',
    ]);
  });

  it('stops the worker at start on a bad exec setting, naming it', () => {
    expect(() => readSettings({ TOOLWIRE_MODULE_ROOTS: 'relative/dir' })).toThrow(
      /invalid environment: TOOLWIRE_MODULE_ROOTS: "relative\/dir" is not an absolute path/,
    );
    expect(readSettings({ TOOLWIRE_ALLOW_COMMANDS: 'npx' }).execRules.commands).toEqual({ any: false, items: ['npx'] });
  });
});

describe('the exec policy', () => {
  let root: string;
  let link: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'toolwire-roots-'));
    await mkdir(join(root, 'tools'));
    link = join(root, 'link-to-tools');
    await symlink(join(root, 'tools'), link);
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('lets the operator’s directory run what it names, by default', () => {
    const p = new ExecPolicy('directory');
    for (const e of [command('/bin/sh', '/bin/sh'), command('npx'), module('/anywhere/x.mjs'), module(undefined), slim('a/b:1@c')])
      expect(p.refuse(e)).toBeUndefined();
    expect(p.refusePlugin('mcp')).toBeUndefined();
  });

  it('lets the TrustGraph config service run nothing by default, and says which setting would allow it', () => {
    const p = new ExecPolicy('trustgraph');
    expect(p.refusePlugin('mcp')).toBeUndefined();
    expect(p.refuse(command('/bin/sh', '/bin/sh'))).toBe(
      'tool-service/s.json: plugin.command: the worker does not start "/bin/sh" for the TrustGraph config service: TOOLWIRE_ALLOW_COMMANDS is unset, which allows none for this source; add it to TOOLWIRE_ALLOW_COMMANDS to allow it',
    );
    expect(p.refuse(module('/tmp/x.mjs', './x.mjs'))).toBe(
      'tool-service/s.json: plugin.module: the worker does not import "./x.mjs" (/tmp/x.mjs) for the TrustGraph config service: it is under no directory of TOOLWIRE_MODULE_ROOTS; TOOLWIRE_MODULE_ROOTS is unset, which allows only builtin: modules for this source; add a directory that holds it to TOOLWIRE_MODULE_ROOTS to allow it',
    );
    expect(p.refuse(module(undefined, 'some-package'))).toMatch(
      /"some-package" is not found, and for the TrustGraph config service the worker imports only builtin: modules and files under TOOLWIRE_MODULE_ROOTS/,
    );
    expect(p.refuse(slim('langgenius/openai:0.1@abc'))).toMatch(
      /does not run Dify plugin "langgenius\/openai:0.1@abc" on this machine \(DIFY_SLIM_MODE=local\) for the TrustGraph config service: TOOLWIRE_ALLOW_SLIM_PLUGINS is unset/,
    );
  });

  it('allows a command by the name or the path it is given as, and nothing else', () => {
    const p = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_COMMANDS: 'npx,/usr/local/bin/server' }).rules);
    expect(p.refuse(command('npx'))).toBeUndefined();
    expect(p.refuse(command('/usr/local/bin/server', '/usr/local/bin/server'))).toBeUndefined();
    expect(p.refuse(command('../bin/server', '/usr/local/bin/server'))).toBeUndefined();
    // A name does not allow some file of that name, nor a path the name.
    expect(p.refuse(command('/tmp/evil/npx', '/tmp/evil/npx'))).toMatch(/does not start "\/tmp\/evil\/npx" .*add it to TOOLWIRE_ALLOW_COMMANDS/);
    expect(p.refuse(command('server'))).toBeDefined();
    expect(p.refuse(command('./npx', '/srv/config/npx'))).toMatch(/"\.\/npx" \(\/srv\/config\/npx\)/);
  });

  it('imports files under a module root only, the root’s real place included', () => {
    const p = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_MODULE_ROOTS: link }).rules);
    expect(p.refuse(module(join(root, 'tools', 'a.mjs')))).toBeUndefined();
    expect(p.refuse(module(join(link, 'sub', 'b.mjs')))).toBeUndefined();
    expect(p.refuse(module(join(root, 'tools-evil', 'a.mjs')))).toMatch(/under no directory of TOOLWIRE_MODULE_ROOTS; add a directory/);
    expect(p.refuse(module(join(root, 'a.mjs')))).toBeDefined();
  });

  it('starts a command in a working directory by where it really is: a link under a root to elsewhere is refused', async () => {
    await mkdir(join(root, 'outside'));
    await symlink(join(root, 'outside'), join(root, 'tools', 'escape'));
    const p = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_MODULE_ROOTS: join(root, 'tools') }).rules);
    const cwd = (dir: string): Execution => ({ type: 'working-dir', where: 'tool-service/s.json: plugin.cwd', dir });
    expect(p.refuse(cwd(join(root, 'tools', 'escape')))).toMatch(
      /does not start a command in ".*escape" .*add a directory that holds it to TOOLWIRE_MODULE_ROOTS/,
    );
    expect(p.refuse(cwd(join(root, 'tools')))).toBeUndefined();
    // A link to the root is the root.
    expect(new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_MODULE_ROOTS: join(root, 'tools') }).rules).refuse(cwd(link))).toBeUndefined();
  });

  it('runs Dify plugins locally by name or pattern, and takes kinds from its list', () => {
    const p = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_SLIM_PLUGINS: 'langgenius/*', TOOLWIRE_ALLOW_PLUGINS: 'openapi' }).rules);
    expect(p.refuse(slim('langgenius/openai:0.1@abc'))).toBeUndefined();
    expect(p.refuse(slim('someone/else:0.1@abc'))).toMatch(/add it to TOOLWIRE_ALLOW_SLIM_PLUGINS/);
    expect(p.refusePlugin('openapi')).toBeUndefined();
    expect(p.refusePlugin('module')).toBe(
      'plugin kind "module" is not allowed on this worker for the TrustGraph config service: add it to TOOLWIRE_ALLOW_PLUGINS to allow it',
    );
  });

  it('holds the directory to what the operator set, when set', () => {
    const p = new ExecPolicy('directory', readExecRules({ TOOLWIRE_ALLOW_COMMANDS: 'none' }).rules);
    expect(p.refuse(command('npx'))).toMatch(/for the config directory: add it to TOOLWIRE_ALLOW_COMMANDS/);
    expect(p.refuse(module('/anywhere/x.mjs'))).toBeUndefined();
  });
});

describe('what config may set for a command, and where it may make the worker connect', () => {
  const env = (...names: string[]): Execution => ({ type: 'command-env', where: 'tool-service/s.json: plugin.env', command: 'npx', names });
  const cwd = (dir: string): Execution => ({ type: 'working-dir', where: 'tool-service/s.json: plugin.cwd', dir });
  const reach = (url: string, allowPrivate: boolean | string[] = false) => ({ where: 'tool-service/s.json: plugin.url', url, allowPrivate });

  it('reads the variable names and CIDRs, naming a bad one', () => {
    expect(readExecRules({ TOOLWIRE_ALLOW_COMMAND_ENV: 'GITHUB_TOKEN, MYSRV_*', TOOLWIRE_ALLOW_PRIVATE: '10.0.0.0/8,::1/128' }).rules).toMatchObject({
      commandEnv: { any: false, items: ['GITHUB_TOKEN', 'MYSRV_*'] },
      privateNetworks: { any: false, items: ['10.0.0.0/8', '::1/128'] },
    });
    expect(readExecRules({ TOOLWIRE_ALLOW_COMMAND_ENV: 'A=B', TOOLWIRE_ALLOW_PRIVATE: 'intranet' }).problems).toEqual([
      'TOOLWIRE_ALLOW_COMMAND_ENV: "A=B" is not a variable name (or PREFIX*)',
      'TOOLWIRE_ALLOW_PRIVATE: "intranet" is not a CIDR, such as 10.0.0.0/8 or 127.0.0.1/32',
    ]);
  });

  it('sets no variable of a remote source’s choosing unless listed, and only listed ones', () => {
    expect(new ExecPolicy('directory').refuse(env('NODE_OPTIONS', 'LD_PRELOAD'))).toBeUndefined();
    expect(new ExecPolicy('trustgraph').refuse(env('NODE_OPTIONS', 'LD_PRELOAD'))).toBe(
      'tool-service/s.json: plugin.env: the worker does not set NODE_OPTIONS, LD_PRELOAD for "npx" for the TrustGraph config service (such variables can make a command run other code): TOOLWIRE_ALLOW_COMMAND_ENV is unset, which allows none for this source; add them to TOOLWIRE_ALLOW_COMMAND_ENV to allow it',
    );
    const listed = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_COMMAND_ENV: 'GITHUB_TOKEN,MYSRV_*' }).rules);
    expect(listed.refuse(env('GITHUB_TOKEN', 'MYSRV_MODE'))).toBeUndefined();
    expect(listed.refuse(env('GITHUB_TOKEN', 'npm_config_registry'))).toMatch(
      /does not set npm_config_registry for "npx" .*add it to TOOLWIRE_ALLOW_COMMAND_ENV/,
    );
  });

  it('starts a remote source’s command only in a working directory under a module root', () => {
    expect(new ExecPolicy('directory').refuse(cwd('/tmp/x'))).toBeUndefined();
    expect(new ExecPolicy('trustgraph').refuse(cwd('/tmp/x'))).toMatch(
      /^tool-service\/s\.json: plugin\.cwd: the worker does not start a command in "\/tmp\/x" for the TrustGraph config service: .*TOOLWIRE_MODULE_ROOTS is unset/,
    );
    const rooted = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_MODULE_ROOTS: '/opt/tools' }).rules);
    expect(rooted.refuse(cwd('/opt/tools/github'))).toBeUndefined();
    expect(rooted.refuse(cwd('/opt/toolsx'))).toBeDefined();
  });

  it('keeps a remote source off private addresses unless the operator allows them', () => {
    const open = new ExecPolicy('directory');
    expect(open.privateAllowance()).toBe(true);
    expect(open.refuseReach(reach('http://127.0.0.1:9/mcp', true))).toBeUndefined();
    const remote = new ExecPolicy('trustgraph');
    expect(remote.privateAllowance()).toEqual([]);
    expect(remote.refuseReach(reach('https://api.example/'))).toBeUndefined();
    // A name is left to the guard at connect time.
    expect(remote.refuseReach(reach('http://localhost:9/'))).toBeUndefined();
    expect(remote.refuseReach(reach('http://127.0.0.1:9/mcp'))).toBe(
      'tool-service/s.json: plugin.url: the worker does not connect to 127.0.0.1, a loopback address, for the TrustGraph config service: TOOLWIRE_ALLOW_PRIVATE is unset, which allows none for this source; add their CIDRs to TOOLWIRE_ALLOW_PRIVATE to allow it',
    );
    expect(remote.refuseReach(reach('http://[::ffff:10.0.0.1]/'))).toMatch(/does not connect to ::ffff:a00:1, a private address/);
    expect(remote.refuseReach(reach('https://api.example/', true))).toMatch(/does not connect to every private address .*TOOLWIRE_ALLOW_PRIVATE is unset/);
    const some = new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_PRIVATE: '10.1.0.0/16,127.0.0.1/32' }).rules);
    expect(some.refuseReach(reach('http://127.0.0.1:9/', ['127.0.0.1/32', '10.1.2.0/24']))).toBeUndefined();
    expect(some.refuseReach(reach('http://127.0.0.2:9/'))).toMatch(/does not connect to 127\.0\.0\.2, a loopback address/);
    expect(some.refuseReach(reach('http://10.1.0.5/', ['10.0.0.0/8']))).toMatch(
      /does not connect to 10\.0\.0\.0\/8 .*add their CIDRs to TOOLWIRE_ALLOW_PRIVATE/,
    );
    expect(some.refuseReach(reach('http://10.1.0.5/', true))).toBeDefined();
    expect(new ExecPolicy('trustgraph', readExecRules({ TOOLWIRE_ALLOW_PRIVATE: '*' }).rules).refuseReach(reach('http://127.0.0.1/', true))).toBeUndefined();
  });
});
