import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { serviceDescriptor } from '../../support/descriptors.js';

describe('toolwire validate and config', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-cli-'));
    await cp('config', dir, { recursive: true });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('validates the shipped examples', async () => {
    const r = await runCli(['validate', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/4 tool-services, 5 tools: OK/);
  });

  it('prints every problem with file and field and exits 1', async () => {
    await runCli(['config', 'put', '-d', dir, '--type', 'tool', '--key', 'broken', '--force', '--value', '{"name":"tell-joke","service":"ghost"}']);
    const r = await runCli(['validate', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/tool\/tell-joke\.json: name: duplicate tool name "tell-joke" \(also in .*tool\/broken\.json\)/);
    expect(r.stderr).toMatch(/tool\/broken\.json: service: unknown tool-service "ghost"/);
  });

  it("runs a module plugin's code only when asked to check plugins: --static does not", async () => {
    const marker = join(dir, 'ran.txt');
    await writeFile(
      join(dir, 'side-effect.mjs'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport default () => 'x';\n`,
    );
    const service = serviceDescriptor('side', { plugin: { kind: 'module', module: './side-effect.mjs' } });
    await writeFile(join(dir, 'tool-service', 'side.json'), JSON.stringify(service));
    const quiet = await runCli(['validate', dir, '--static']);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/OK \(static: plugins not checked\)/);
    expect(existsSync(marker)).toBe(false);
    expect((await runCli(['config', 'put', '-d', dir, '--static', '--type', 'tool', '-k', 's', '-v', '{"name":"s","service":"side"}'])).code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    // Without --static the plugin's check imports the module: its code runs.
    expect((await runCli(['validate', dir])).code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    expect((await runCli(['validate', '--help'])).stdout).toMatch(/a module plugin's file is imported \(its\s+top-level code runs\)/);
    // Checking credentials runs plugin code by design: it cannot be static.
    const both = await runCli(['validate', dir, '--static', '--check-credentials']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--static and --check-credentials do not go together/);
    // With no Dify service there is nothing to ask: the shipped examples pass.
    expect((await runCli(['validate', dir, '--check-credentials'])).code).toBe(0);
  });

  it('puts, gets, lists and deletes an item with tg-put-config-item flags', async () => {
    const value = JSON.stringify({ type: 'tool-service', name: 'pun-on-demand', description: 'd', service: 'joke-service', style: 'one-liner' });
    expect((await runCli(['config', 'put', '-d', dir, '--type', 'tool', '--key', 'pun-on-demand', '--stdin'], {}, value)).code).toBe(0);
    expect((await runCli(['config', 'list', '-d', dir, '--type', 'tool'])).stdout.split('\n')).toContain('pun-on-demand');
    expect(JSON.parse((await runCli(['config', 'get', '-d', dir, '--type', 'tool', '-k', 'pun-on-demand'])).stdout)).toMatchObject({ style: 'one-liner' });
    expect((await runCli(['config', 'delete', '-d', dir, '--type', 'tool', '-k', 'pun-on-demand'])).code).toBe(0);
    expect((await runCli(['config', 'get', '-d', dir, '--type', 'tool', '-k', 'pun-on-demand'])).code).toBe(1);
  });

  it('refuses to put an item that would break the catalog', async () => {
    const r = await runCli(['config', 'put', '-d', dir, '--type', 'tool', '-k', 'x', '-v', '{"name":"x","service":"nowhere"}']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not written.*\n.*unknown tool-service "nowhere"/);
    expect((await runCli(['config', 'list', '-d', dir, '--type', 'tool'])).stdout).not.toMatch(/^x$/m);
  });

  it('explains usage errors', async () => {
    expect((await runCli(['config', 'put', '-d', dir, '--type', 'tool', '-k', 'x'])).stderr).toMatch(/exactly one of --value and --stdin/);
    expect((await runCli(['config', 'put', '--type', 'tool', '-k', 'x', '-v', '{bad'])).stderr).toMatch(/not valid JSON/);
    expect((await runCli(['nonsense'])).code).toBe(2);
    for (const c of ['run', 'validate', 'call', 'config']) {
      const r = await runCli([c, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: toolwire ${c}`));
    }
  });
});
