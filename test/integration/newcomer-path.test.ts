import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand as run, startProjectWorker, until } from '../support/run-process.js';

const REPO = resolve('.');

describe("a newcomer's first tool: init, install, start, call, edit, test", () => {
  let tmp: string;
  let project: string;
  let worker: ChildProcess | undefined;

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'toolwire-newcomer-'));
    // toolwire is not published: the project depends on this checkout, packed as npm would publish it (dist built).
    const packed = await run('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp], REPO);
    expect(packed.code, packed.out).toBe(0);
    const tarball = (await readdir(tmp)).find((f) => f.endsWith('.tgz'))!;
    project = join(tmp, `tools-${Date.now().toString(36)}`);
    const init = await run(process.execPath, [join(REPO, 'bin/toolwire.js'), 'init', project, '--toolwire', `file:${join(tmp, tarball)}`], REPO);
    expect(init.code, init.out).toBe(0);
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], project, 240_000);
    expect(install.code, install.out).toBe(0);
  }, 300_000);

  afterAll(async () => {
    // npm start's process group: npm and the worker under it.
    if (worker?.pid) process.kill(-worker.pid, 'SIGKILL');
    await rm(tmp, { recursive: true, force: true });
  });

  it('serves the generated tool through the gateway and over the broker, reloads an edit, and passes its own test', async () => {
    expect(process.env['PULSAR_URL']).toBeTruthy();
    const started = await startProjectWorker(project, { ...process.env, LOG_LEVEL: 'info' });
    worker = started.child;
    const { base } = started;
    const log = started.log;
    expect(log()).toMatch(/"transport":"pulsar(-ws)?"/);
    const toolwire = join(project, 'node_modules', '.bin', 'toolwire');

    const viaGateway = await run(toolwire, ['call', 'greet', '--args', '{"name":"Ada"}', '--url', base], project);
    expect(viaGateway).toEqual({ code: 0, out: 'Hello, Ada!\n' });
    const viaBroker = await run(
      toolwire,
      [
        'call',
        'greet',
        '--args',
        '{"name":"Ada","language":"fr"}',
        '--pulsar-url',
        process.env['PULSAR_URL']!,
        '--admin-url',
        process.env['PULSAR_ADMIN_URL']!,
        '-d',
        'config',
        '--timeout-ms',
        '30000',
      ],
      project,
    );
    expect(viaBroker.out).toBe('Bonjour, Ada!\n');

    // Edited while it runs: the next call answers from the new code.
    const file = join(project, 'tools', 'greet.ts');
    await writeFile(file, (await readFile(file, 'utf8')).replace("de: 'Hallo'", "de: 'Guten Tag'"));
    await until('the edit applied', () => log().includes('config change applied'), log);
    const edited = await run(toolwire, ['call', 'greet', '--args', '{"name":"Ada","language":"de"}', '--url', base], project);
    expect(edited).toEqual({ code: 0, out: 'Guten Tag, Ada!\n' });

    // A type error (tsx alone would run it) is refused with where it is; the last good code serves.
    const good = await readFile(file, 'utf8');
    await writeFile(file, `${good}\nexport const count: number = 'three';\n`);
    const line = good.split('\n').length + 1;
    await until('the type error refused', () => new RegExp(`greet\\.ts:${line}:14: TS2322: .*refused`).test(log()), log);
    expect((await run(toolwire, ['call', 'greet', '--args', '{"name":"Ada","language":"de"}', '--url', base], project)).out).toBe('Guten Tag, Ada!\n');
    await writeFile(file, good);

    const validate = await run(toolwire, ['validate', 'config'], project);
    expect(validate.out).toBe('config: 1 tool-services, 1 tools: OK\n');
    const test = await run('npm', ['test'], project);
    expect(test.code, test.out).toBe(0);
    expect(test.out).toMatch(/Tests\s+2 passed/);
  }, 180_000);
});
