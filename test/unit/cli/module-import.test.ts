import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';

const WEATHER = resolve('test/fixtures/typed/weather.ts');

describe('toolwire module import', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'module-import-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes the service and a descriptor per typed tool, which validate as they are', async () => {
    const out = join(dir, 'config');
    const r = await runCli(['module', 'import', WEATHER, '--service', 'weather', '--out', out]);
    expect(r.stderr).toBe(`2 tool(s) of 2 written to ${out}\n`);
    expect(r.code).toBe(0);
    const service = JSON.parse(await readFile(join(out, 'tool-service', 'weather.json'), 'utf8')) as { plugin: { module: string } };
    expect(resolve(out, service.plugin.module)).toBe(WEATHER);
    const forecast = JSON.parse(await readFile(join(out, 'tool', 'forecast.json'), 'utf8')) as Record<string, unknown>;
    expect(forecast).toMatchObject({ name: 'forecast', service: 'weather', tool: 'forecast', 'plugin-options': { tool: 'forecast' } });
    expect((forecast['arguments'] as { name: string }[]).map((a) => a.name)).toEqual(['city', 'units', 'days', 'where']);
    const v = await runCli(['validate', out]);
    expect(v.stderr).toBe('');
    expect(v.stdout).toBe(`${out}: 1 tool-services, 2 tools: OK\n`);
  });

  it('prints one document without --out, and refuses a module with no typed tool', async () => {
    const r = await runCli(['module', 'import', WEATHER, '--service', 'w', '--include', 'forecast', '--prefix', 'wx-']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { 'tool-service': { plugin: { module: string } }; tools: { name: string }[] };
    expect(doc.tools.map((t) => t.name)).toEqual(['wx-forecast']);
    // A path relative to here stays a path (a bare name would be read as a package).
    const relative = await runCli(['module', 'import', 'test/fixtures/typed/weather.ts', '--service', 'w']);
    expect((JSON.parse(relative.stdout) as typeof doc)['tool-service'].plugin.module).toBe('./test/fixtures/typed/weather.ts');
    const none = await runCli(['module', 'import', resolve('src/plugins/module/builtin/echo.ts'), '--service', 'e']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/exports no typed tool/);
  });

  it('reports in validate a descriptor edited away from its schema', async () => {
    const out = join(dir, 'config');
    await runCli(['module', 'import', WEATHER, '--service', 'weather', '--out', out]);
    const path = join(out, 'tool', 'forecast.json');
    const d = JSON.parse(await readFile(path, 'utf8')) as { arguments: { name: string; required?: boolean }[] };
    d.arguments[0]!.required = false;
    await import('node:fs/promises').then((fs) => fs.writeFile(path, JSON.stringify(d)));
    const v = await runCli(['validate', out]);
    expect(v.code).toBe(1);
    expect(v.stderr).toContain('tool/forecast.json: arguments: "city" is required in forecast\'s schema but optional in the descriptor');
  });
});
