import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configCommand } from '../../../src/cli/commands/config.js';
import { runCli } from '../../support/cli.js';

describe('toolwire config operations', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-config-'));
    await cp('config', join(dir, 'shipped'), { recursive: true });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('prints its help with no operation (exit 2), and for --help after any operation (exit 0)', async () => {
    expect(await runCli(['config'])).toEqual({ code: 2, stdout: configCommand.help, stderr: '' });
    for (const argv of [
      ['put', '--help'],
      ['import', 'somewhere', '-h'],
      ['fly', '--help'],
    ]) {
      expect(await runCli(['config', ...argv])).toEqual({ code: 0, stdout: configCommand.help, stderr: '' });
    }
  });

  it('names the operations when given another', async () => {
    expect(await runCli(['config', 'fly'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'toolwire config: unknown config operation "fly" (put, get, list, delete, import)\n',
    });
    expect((await runCli(['config', 'toString'])).stderr).toContain('unknown config operation "toString"');
  });

  it('asks for the flags each operation needs before it opens a store', async () => {
    const cases: [string[], string][] = [
      [['list'], '--type is required'],
      [['get', '--key', 'k'], '--type is required'],
      [['get', '--type', 'tool'], '--key is required'],
      [['delete', '--type', 'tool'], '--key is required'],
      [['put', '--type', 'tool'], '--key is required'],
      [['put', '--type', 'tool', '-k', 'x', '-v', '{}', '--stdin'], 'give exactly one of --value and --stdin'],
      [['import'], 'import needs the directory to read'],
    ];
    // A trustgraph store that is not there: reaching it would be another error.
    for (const [argv, message] of cases) {
      expect(await runCli(['config', ...argv, '-u', 'http://127.0.0.1:1/'])).toEqual({ code: 2, stdout: '', stderr: `toolwire config: ${message}\n` });
    }
  });

  it('takes the operation anywhere among the flags', async () => {
    const shipped = join(dir, 'shipped');
    const first = await runCli(['config', '-d', shipped, '--type', 'tool', 'list']);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe((await runCli(['config', 'list', '--type', 'tool', '-d', shipped])).stdout);
    expect(first.stdout.split('\n')).toContain('echo');
  });

  it('refuses a store the flags contradict, and a workspace the directory does not have', async () => {
    expect((await runCli(['config', 'list', '--type', 'tool', '--store', 'disk'])).stderr).toBe(
      'toolwire config: --store disk: use directory, trustgraph or pulsar\n',
    );
    expect((await runCli(['config', 'list', '--type', 'tool', '--store', 'directory', '-u', 'http://x'])).stderr).toBe(
      'toolwire config: --store directory contradicts --api-url\n',
    );
    expect((await runCli(['config', 'list', '--type', 'tool', '--store', 'trustgraph', '--pulsar-url', 'pulsar://x'])).stderr).toBe(
      'toolwire config: --store trustgraph contradicts --pulsar-url\n',
    );
    const workspace = await runCli(['config', 'list', '--type', 'tool', '-d', join(dir, 'shipped'), '-w', 'team']);
    expect(workspace).toEqual({ code: 2, stdout: '', stderr: 'toolwire config: workspace "team": the directory store has only the "default" workspace\n' });
  });

  it('imports every descriptor of a directory in one go, and says how many', async () => {
    const store = join(dir, 'store');
    const result = await runCli(['config', 'import', join(dir, 'shipped'), '-d', store, '--static']);
    expect(result).toEqual({ code: 0, stdout: `9 item(s) put into ${store}\n`, stderr: '' });
    expect((await runCli(['config', 'list', '--type', 'tool-service', '-d', store])).stdout.split('\n').filter(Boolean)).toHaveLength(4);
  });

  it('imports nothing from a directory with no descriptors, or with a broken one', async () => {
    const empty = join(dir, 'empty');
    await mkdir(empty);
    expect((await runCli(['config', 'import', empty, '-d', join(dir, 'store')])).stderr).toBe(
      `toolwire config: ${empty} holds no tool-service or tool descriptors (<dir>/tool-service/*.json, <dir>/tool/*.json)\n`,
    );
    await writeFile(join(dir, 'shipped', 'tool', 'broken.json'), '{');
    const broken = await runCli(['config', 'import', join(dir, 'shipped'), '-d', join(dir, 'store')]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^toolwire config: not imported: .*broken\.json: /);
  });

  it('says when get or delete finds no item (exit 1)', async () => {
    const shipped = join(dir, 'shipped');
    expect(await runCli(['config', 'get', '--type', 'tool', '-k', 'nope', '-d', shipped])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'no tool item with key nope\n',
    });
    expect(await runCli(['config', 'delete', '--type', 'tool', '-k', 'nope', '-d', shipped, '--static'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'no tool item with key nope\n',
    });
  });

  it('refuses to delete an item the catalog needs, unless forced', async () => {
    const shipped = join(dir, 'shipped');
    const refused = await runCli(['config', 'delete', '--type', 'tool-service', '-k', 'echo-service', '-d', shipped, '--static']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^not deleted: the catalog would not validate \(--force writes anyway\)\n {2}.*unknown tool-service "echo-service"/);
    expect((await runCli(['config', 'delete', '--type', 'tool-service', '-k', 'echo-service', '-d', shipped, '--force'])).code).toBe(0);
  });
});
