import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { serviceDescriptor } from '../../support/descriptors.js';

/** The built CLI in a process of its own: Node's loader, not the test runner's, imports the module. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const c = spawn(process.execPath, [resolve('bin/toolwire.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

describe('toolwire validate of a TypeScript module', { timeout: 60_000 }, () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'validate-ts-'));
    await mkdir(join(dir, 'tools'));
    await mkdir(join(dir, 'config', 'tool-service'), { recursive: true });
    await writeFile(
      join(dir, 'config', 'tool-service', 'answer.json'),
      JSON.stringify(serviceDescriptor('answer', { plugin: { kind: 'module', module: '../tools/answer.ts' } })),
    );
    // Loads (tsx only strips types), but does not type check.
    await writeFile(join(dir, 'tools', 'answer.ts'), `export default (): number => 'forty-two';\n`);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("type checks with --type-check, as run --watch does, with the project's typescript", async () => {
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
    await mkdir(join(dir, 'node_modules'));
    await symlink(resolve('node_modules/typescript'), join(dir, 'node_modules', 'typescript'));
    const plain = await runCli(['validate', join(dir, 'config')]);
    expect([plain.code, plain.stderr]).toEqual([0, '']);
    const checked = await runCli(['validate', '--type-check', join(dir, 'config')]);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toContain(
      `tool-service/answer.json: plugin.module: ${join(dir, 'tools', 'answer.ts')}:1:30: TS2322: Type 'string' is not assignable to type 'number'.`,
    );
  });

  it('says when --type-check finds no typescript to check with, and that --static checks no module', async () => {
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
    const r = await runCli(['validate', '--type-check', join(dir, 'config')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/tool-service\/answer\.json: plugin\.module: not type checked: .*typescript/);
    const both = await runCli(['validate', '--type-check', '--static', join(dir, 'config')]);
    expect(both.code).toBe(2);
  });

  it('says what to add to package.json when a .ts module loads as CommonJS', async () => {
    await writeFile(join(dir, 'package.json'), '{"name":"no-type"}\n');
    const r = await cli(['validate', join(dir, 'config')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`add "type": "module" to ${join(dir, 'package.json')}`);
    expect(r.stderr).not.toContain('in a cycle');
  });
});
