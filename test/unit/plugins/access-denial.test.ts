import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessDenial, commandDenial } from '../../../src/plugins/access-denial.js';

// Files made here are this process's; "another user" is any uid and gid that are not its own.
const me = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
const other = { uid: me.uid === 65534 ? 65533 : 65534, gid: me.gid === 65534 ? 65533 : 65534 };
const owner = `owner ${me.uid}:${me.gid}`;
let root: string;

async function file(path: string, mode: number): Promise<string> {
  await writeFile(path, '#!/bin/sh\n');
  await chmod(path, mode);
  return path;
}

async function dir(path: string, mode: number): Promise<string> {
  await mkdir(path);
  await chmod(path, mode);
  return path;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tw-access-'));
  await chmod(root, 0o755);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('why another user may not read or execute a file', () => {
  it('names the directory on the way that the user may not enter', async () => {
    const closed = await dir(join(root, 'closed'), 0o700);
    const script = await file(join(closed, 'server.mjs'), 0o644);
    expect(await accessDenial(script, other, 'read')).toBe(
      `uid ${other.uid} (gid ${other.gid}) cannot enter ${closed} (mode 700, ${owner}) on the way to ${script}`,
    );
    expect(await accessDenial(script, me, 'read')).toBeUndefined();
  });

  it('names the file itself when its bits refuse what is needed', async () => {
    const secret = await file(join(root, 'secret.mjs'), 0o600);
    expect(await accessDenial(secret, other, 'read')).toBe(`uid ${other.uid} (gid ${other.gid}) cannot read ${secret} (mode 600, ${owner})`);
    const plain = await file(join(root, 'plain'), 0o644);
    expect(await accessDenial(plain, other, 'read')).toBeUndefined();
    expect(await accessDenial(plain, other, 'execute')).toBe(`uid ${other.uid} (gid ${other.gid}) cannot execute ${plain} (mode 644, ${owner})`);
  });

  it("reads the group's bits for a user of the file's group, and lets root read anything but execute only what some bit allows", async () => {
    const shared = await file(join(root, 'shared'), 0o640);
    expect(await accessDenial(shared, { uid: other.uid, gid: me.gid }, 'read')).toBeUndefined();
    expect(await accessDenial(shared, { uid: 0, gid: 0 }, 'read')).toBeUndefined();
    expect(await accessDenial(shared, { uid: 0, gid: 0 }, 'execute')).toMatch(/^uid 0 \(gid 0\) cannot execute /);
  });

  it('follows a symbolic link to the real file and checks its way too', async () => {
    const closed = await dir(join(root, 'closed-target'), 0o700);
    const target = await file(join(closed, 'real.mjs'), 0o644);
    await symlink(target, join(root, 'link.mjs'));
    expect(await accessDenial(join(root, 'link.mjs'), other, 'read')).toContain(`cannot enter ${closed} (mode 700`);
  });

  it('says nothing of a file that does not exist', async () => {
    expect(await accessDenial(join(root, 'missing'), other, 'read')).toBeUndefined();
  });

  it("checks a command's program, found on PATH when bare, and the files among its arguments", async () => {
    const bin = await dir(join(root, 'bin'), 0o755);
    await file(join(bin, 'tool'), 0o700);
    const where = { cwd: root, path: `/nonexistent:${bin}` };
    expect(await commandDenial('tool', [], where, other)).toContain(`cannot execute ${join(bin, 'tool')} (mode 700`);
    await file(join(root, 'script.mjs'), 0o600);
    // Flags and arguments that name no file are passed over; a relative one is the cwd's.
    expect(await commandDenial('/bin/sh', ['-e', 'not-a-file', 'script.mjs'], where, other)).toContain(`cannot read ${join(root, 'script.mjs')} (mode 600`);
    expect(await commandDenial('/bin/sh', ['-e', 'not-a-file'], where, other)).toBeUndefined();
  });
});
