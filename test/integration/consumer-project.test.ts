/**
 * toolwire as someone without a checkout gets it: the packed tarball installed in an empty
 * directory, `npx toolwire init` there, and the new project installed, tested, started and
 * called. The project must find toolwire where `init` came from (the tarball), never ask a
 * registry for the name: toolwire is not published, and whoever took the name would run code
 * on every such install. Embedded transport: this is the path before any broker.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand, startProjectWorker, stopGroup } from '../support/run-process.js';

const REPO = resolve('.');
/** npm's cache: the user's (or the one `npm test` runs with), never one inside the checkout. */
const userCache = process.env['npm_config_cache'] ?? join(homedir(), '.npm');
const NPM_ENV = { npm_config_cache: resolve(userCache).startsWith(REPO + sep) ? join(tmpdir(), 'toolwire-npm-cache') : userCache };
const INSTALL = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'http'];
/** A request npm made to a registry for the package named toolwire (`npm http fetch GET 200 https://…/toolwire 12ms`). */
const ASKED_FOR_TOOLWIRE = /fetch GET \d+ \S+\/toolwire(?:[\s/?]|$)/m;

const npm = (args: readonly string[], cwd: string, timeoutMs = 240_000) => runCommand('npm', args, cwd, timeoutMs, NPM_ENV);

describe('a consumer of the packed toolwire: install the tarball, init, install, test, start, call', () => {
  let tmp: string;
  let tarball: string;
  let project: string;
  let projectInstall: { code: number | null; out: string };
  let worker: ChildProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(join(REPO, 'dist/main.js'))) throw new Error('dist/ is not built: run `npm run build` (npm test does it first)');
    tmp = await mkdtemp(join(tmpdir(), 'toolwire-consumer-'));
    const packed = await npm(['pack', '--ignore-scripts', '--pack-destination', tmp], REPO);
    expect(packed.code, packed.out).toBe(0);
    tarball = join(
      tmp,
      (await readdir(tmp)).find((f) => f.endsWith('.tgz'))!,
    );
    const consumer = join(tmp, 'consumer');
    await mkdir(consumer);
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
    const installed = await npm([...INSTALL, tarball], consumer);
    expect(installed.code, installed.out).toBe(0);
    expect(installed.out).not.toMatch(ASKED_FOR_TOOLWIRE);
    project = join(tmp, 'my-tools');
    // `--no`: the consumer's own toolwire, never one fetched for the occasion.
    const init = await runCommand('npx', ['--no', 'toolwire', 'init', project], consumer, 60_000, NPM_ENV);
    expect(init.code, init.out).toBe(0);
    projectInstall = await npm(INSTALL, project);
  }, 420_000);

  afterAll(async () => {
    if (worker) await stopGroup(worker);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }, 30_000);

  it('depends on the tarball it was installed from, and installs it from there', async () => {
    const pkg = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies).toEqual({ toolwire: `file:${tarball}` });
    expect(projectInstall.code, projectInstall.out).toBe(0);
    expect(projectInstall.out).not.toMatch(ASKED_FOR_TOOLWIRE);
    const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    expect(lock.packages['node_modules/toolwire']?.resolved).toMatch(/^file:.*\.tgz$/);
  });

  it("passes the project's own test, then serves its tool from npm start", async () => {
    const test = await npm(['test'], project, 120_000);
    expect(test.code, test.out).toBe(0);
    expect(test.out).toMatch(/Tests\s+2 passed/);

    const started = await startProjectWorker(project, {
      ...process.env,
      ...NPM_ENV,
      PULSAR_URL: '',
      PULSAR_ADMIN_URL: '',
      TOOLWIRE_TRANSPORT: 'memory',
      LOG_LEVEL: 'info',
    });
    worker = started.child;
    const { base } = started;
    expect(started.log()).toContain('"transport":"memory"');
    const call = await runCommand('npx', ['--no', 'toolwire', 'call', 'greet', '--args', '{"name":"Ada"}', '--url', base], project, 60_000, NPM_ENV);
    expect(call).toEqual({ code: 0, out: 'Hello, Ada!\n' });
    await stopGroup(worker);
    expect(worker.exitCode ?? worker.signalCode).not.toBeNull();
  }, 180_000);
});
