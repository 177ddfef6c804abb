import type { Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';

/** A user a child process is switched to: libuv drops the supplementary groups, so `gid` is its only group. */
export interface ChildUser {
  readonly uid: number;
  readonly gid: number;
}

export type AccessNeed = 'read' | 'execute';

/** The user a child spawned with these options runs as; undefined when neither is set (the worker's own). */
export function childUser(uid: number | undefined, gid: number | undefined): ChildUser | undefined {
  if (uid === undefined && gid === undefined) return undefined;
  return { uid: uid ?? process.getuid?.() ?? 0, gid: gid ?? process.getgid?.() ?? 0 };
}

const WANT = { read: 0o4, execute: 0o1, search: 0o1 } as const;

function describe(path: string, s: Stats): string {
  return `${path} (mode ${(s.mode & 0o7777).toString(8).padStart(3, '0')}, owner ${s.uid}:${s.gid})`;
}

/** The kernel's rule on the mode bits: the owner's bits for the owner, else the group's for the group, else the others'; root passes all but an execute no bit allows. */
function allowed(s: Stats, user: ChildUser, need: keyof typeof WANT): boolean {
  if (user.uid === 0) return need !== 'execute' || s.isDirectory() || (s.mode & 0o111) !== 0;
  const bits = user.uid === s.uid ? (s.mode >> 6) & 7 : user.gid === s.gid ? (s.mode >> 3) & 7 : s.mode & 7;
  return (bits & WANT[need]) !== 0;
}

async function chainDenial(path: string, user: ChildUser, need: AccessNeed): Promise<string | undefined> {
  const dirs: string[] = [];
  for (let d = dirname(path); ; d = dirname(d)) {
    dirs.unshift(d);
    if (dirname(d) === d) break;
  }
  const who = `uid ${user.uid} (gid ${user.gid})`;
  for (const dir of dirs) {
    const s = await stat(dir);
    if (!allowed(s, user, 'search')) return `${who} cannot enter ${describe(dir, s)} on the way to ${path}`;
  }
  const s = await stat(path);
  return allowed(s, user, need) ? undefined : `${who} cannot ${need} ${describe(path, s)}`;
}

/**
 * Why `user` may not read or execute the file at `path`, by the mode bits of the file and of
 * each directory above it, on the path as given and on its real path: e.g.
 * `uid 65534 (gid 65534) cannot enter /root (mode 700, owner 0:0) on the way to /root/x.mjs`.
 * Undefined when the bits allow it, or when the file cannot be examined. ACLs and security
 * modules are not read, so this names a likely cause after a child failed; it never refuses
 * one before.
 */
export async function accessDenial(path: string, user: ChildUser, need: AccessNeed): Promise<string | undefined> {
  try {
    const given = resolve(path);
    const real = await realpath(given);
    return (await chainDenial(given, user, need)) ?? (real !== given ? await chainDenial(real, user, need) : undefined);
  } catch {
    return undefined;
  }
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** The file a bare command name runs: the first on `PATH` that is a file. */
async function onPath(name: string, path: string | undefined): Promise<string | undefined> {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir && isAbsolute(dir) && (await isFile(join(dir, name)))) return join(dir, name);
  }
  return undefined;
}

/**
 * Why `user` cannot run `command` with `args`: the command's file (a bare name: found on `PATH`)
 * it may not execute, or an argument naming an existing file (relative: from `cwd`, as the
 * child resolves it) it may not read, such as the script an interpreter is given.
 */
export async function commandDenial(
  command: string,
  args: readonly string[],
  where: { readonly cwd: string; readonly path: string | undefined },
  user: ChildUser,
): Promise<string | undefined> {
  const file = command.includes('/') ? resolve(where.cwd, command) : await onPath(command, where.path);
  const denied = file === undefined ? undefined : await accessDenial(file, user, 'execute');
  if (denied !== undefined) return denied;
  for (const arg of args) {
    if (arg.startsWith('-') || arg.length === 0) continue;
    const p = resolve(where.cwd, arg);
    if (!(await isFile(p))) continue;
    const why = await accessDenial(p, user, 'read');
    if (why !== undefined) return why;
  }
  return undefined;
}
