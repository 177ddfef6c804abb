import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ownPackageRoot, toolwireDependency } from '../../../src/cli/toolwire-dependency.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '');

describe('the toolwire dependency of a new project: where the running toolwire came from', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await realpath(await mkdtemp(join(tmpdir(), 'tw-dep-')));
  });
  afterEach(() => rm(tmp, { recursive: true, force: true }));

  async function json(path: string, value: unknown): Promise<void> {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, JSON.stringify(value));
  }

  /** toolwire installed in `project` (under node_modules/...`at`), with these files beside it. */
  async function installed(files: Record<string, unknown>, at = 'node_modules/toolwire'): Promise<{ project: string; root: string }> {
    const project = join(tmp, 'consumer');
    const root = join(project, at);
    await json(join(root, 'package.json'), { name: 'toolwire', version: '0.1.0' });
    for (const [path, value] of Object.entries(files)) await json(join(project, path), value);
    return { project, root };
  }

  const lock = (entry: Record<string, unknown>, key = 'node_modules/toolwire') => ({ lockfileVersion: 3, packages: { '': {}, [key]: entry } });

  it('is file: the checkout when run from one', async () => {
    expect(await ownPackageRoot()).toBe(REPO);
    expect(await toolwireDependency(REPO, '0.1.0')).toBe(`file:${REPO}`);
  });

  it('is file: the checkout a symbolic link points to', async () => {
    await symlink(REPO, join(tmp, 'linked'));
    expect(await toolwireDependency(join(tmp, 'linked'), '0.1.0')).toBe(`file:${REPO}`);
  });

  it("is the tarball its project's package-lock says it was installed from, as an absolute path", async () => {
    const { root } = await installed({ 'package-lock.json': lock({ version: '0.1.0', resolved: 'file:../toolwire-0.1.0.tgz' }) });
    expect(await toolwireDependency(root, '0.1.0')).toBe(`file:${join(tmp, 'toolwire-0.1.0.tgz')}`);
  });

  it("reads npm's hidden lockfile, and a nested install's own entry", async () => {
    const { root } = await installed(
      { 'node_modules/.package-lock.json': lock({ resolved: 'file:vendor/tw.tgz' }, 'node_modules/app/node_modules/toolwire') },
      'node_modules/app/node_modules/toolwire',
    );
    expect(await toolwireDependency(root, '0.1.0')).toBe(`file:${join(tmp, 'consumer', 'vendor', 'tw.tgz')}`);
  });

  it("is a registry range only when the lock's tarball is a registry's", async () => {
    const { root } = await installed({ 'package-lock.json': lock({ resolved: 'https://registry.example.org/npm/toolwire/-/toolwire-0.1.0.tgz' }) });
    expect(await toolwireDependency(root, '0.1.0')).toBe('^0.1.0');
  });

  it('keeps a git or URL source as it is', async () => {
    const git = 'git+ssh://git@example.org/acme/toolwire.git#4b825dc642cb6eb9a060e54bf8d69288fbee4904';
    const { root } = await installed({ 'package-lock.json': lock({ resolved: git }) });
    expect(await toolwireDependency(root, '0.1.0')).toBe(git);
  });

  it('is the directory a link entry names', async () => {
    const { root } = await installed({ 'package-lock.json': lock({ resolved: '../toolwire-src', link: true }) });
    expect(await toolwireDependency(root, '0.1.0')).toBe(`file:${join(tmp, 'toolwire-src')}`);
  });

  it("falls back to the project's package.json: a file: spec made absolute, a bare range the registry's", async () => {
    const file = await installed({ 'package.json': { dependencies: { toolwire: 'file:../tw.tgz' } } });
    expect(await toolwireDependency(file.root, '0.1.0')).toBe(`file:${join(tmp, 'tw.tgz')}`);
    await rm(join(tmp, 'consumer'), { recursive: true });
    const range = await installed({ 'package.json': { devDependencies: { toolwire: '~0.1.0' } } });
    expect(await toolwireDependency(range.root, '0.1.0')).toBe('^0.1.0');
  });

  it('is file: the installed directory when nothing says where it came from (a global install)', async () => {
    const { root } = await installed({});
    expect(await toolwireDependency(root, '0.1.0')).toBe(`file:${root}`);
  });
});
