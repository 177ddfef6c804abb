import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';

describe('toolwire init', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'init-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes a project whose descriptors name its tool module and service', async () => {
    const r = await runCli(['init', join(dir, 'My Tools'), '--toolwire', 'file:../toolwire.tgz']);
    expect(r.code).toBe(0);
    const pkg = JSON.parse(await readFile(join(dir, 'My Tools', 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    expect(pkg['name']).toBe('my-tools');
    expect(pkg['dependencies']).toEqual({ toolwire: 'file:../toolwire.tgz' });
    expect(pkg['scripts']!['start']).toBe('toolwire run --watch --config-dir config');
    const service = JSON.parse(await readFile(join(dir, 'My Tools', 'config', 'tool-service', 'my-tools.json'), 'utf8')) as { plugin: unknown };
    expect(service.plugin).toEqual({ kind: 'module', module: '../tools/greet.ts' });
    // One definition: the schema in tools/greet.ts is the arguments, read by the worker.
    const tool = JSON.parse(await readFile(join(dir, 'My Tools', 'config', 'tool', 'greet.json'), 'utf8')) as { arguments: unknown };
    expect(tool.arguments).toBe('from-module');
    expect(pkg['scripts']!['descriptors']).toBe('toolwire module import tools/greet.ts --service my-tools --from-module --out config');
  });

  it('by default depends on the checkout it runs from, and its README links to no registry page', async () => {
    const r = await runCli(['init', join(dir, 'p')]);
    expect(r.code).toBe(0);
    const repo = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '');
    const pkg = JSON.parse(await readFile(join(dir, 'p', 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    expect(pkg['dependencies']).toEqual({ toolwire: `file:${repo}` });
    const readme = await readFile(join(dir, 'p', 'README.md'), 'utf8');
    expect(readme).toContain(`takes from \`file:${repo}\``);
    expect(readme).not.toMatch(/npmjs|\]\(https?:/);
  });

  it('refuses a directory that is not empty, and writes nothing', async () => {
    await writeFile(join(dir, 'keep.txt'), 'mine');
    const r = await runCli(['init', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not empty/);
  });
});
