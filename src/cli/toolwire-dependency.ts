import { readFile, realpath } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The running toolwire's package directory: the nearest directory above this file whose
 * package.json is named toolwire (the checkout, or the installed package).
 */
export async function ownPackageRoot(from = fileURLToPath(import.meta.url)): Promise<string | undefined> {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if ((await readJson(join(dir, 'package.json')))?.['name'] === 'toolwire') return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

type Json = Record<string, unknown>;

async function readJson(path: string): Promise<Json | undefined> {
  try {
    const v: unknown = JSON.parse(await readFile(path, 'utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
  } catch {
    return undefined;
  }
}

function field(v: unknown, ...keys: string[]): unknown {
  for (const k of keys) v = typeof v === 'object' && v !== null ? (v as Json)[k] : undefined;
  return v;
}

/** A registry's tarball URL (`<registry>/toolwire/-/toolwire-0.1.0.tgz`), as npm writes it in `resolved`. */
const REGISTRY_TARBALL = /^https?:\/\/.+\/toolwire\/-\/toolwire-[^/]+\.tgz$/;

/** A spec read from `base`'s lockfile or package.json, as the new project needs it: a `file:` path made absolute, a registry's as `^version`. */
function fromSpec(spec: string, base: string, version: string, declared: boolean): string {
  if (spec.startsWith('file:')) return `file:${resolve(base, spec.slice('file:'.length))}`;
  if (REGISTRY_TARBALL.test(spec)) return `^${version}`;
  // Declared in package.json, a bare range or tag is the registry's; git and URL specs stand as they are.
  if (declared && !/^[a-z+]+:|\//i.test(spec)) return `^${version}`;
  return spec;
}

/**
 * The `toolwire` dependency `toolwire init` writes by default: where the running toolwire
 * came from, so that the new project's `npm install` finds the same code and asks no registry
 * for a name it may not hold (toolwire is not published; whoever took the name on a registry
 * would run code on every such install).
 * - Run from a checkout (no `node_modules` in its real path): `file:` the checkout.
 * - Installed in a project (`<project>/node_modules/.../toolwire`): what that project's
 *   `package-lock.json` (else `npm-shrinkwrap.json`, else npm's `node_modules/.package-lock.json`)
 *   says it was resolved from: a tarball or directory as an absolute `file:` path, a registry's
 *   tarball URL as `^<version>`, a git or other URL as it is; with no lockfile entry, the
 *   project's package.json spec the same way (a bare range: the registry's).
 * - Else (a global install, which keeps no lockfile): `file:` the installed package directory.
 */
export async function toolwireDependency(packageRoot: string, version: string): Promise<string> {
  const real = await realpath(packageRoot).catch(() => resolve(packageRoot));
  const at = real.split(sep).indexOf('node_modules');
  if (at === -1) return `file:${real}`;
  const project = real.split(sep).slice(0, at).join(sep) || sep;
  const key = relative(project, real).split(sep).join('/');
  for (const lock of ['package-lock.json', 'npm-shrinkwrap.json', join('node_modules', '.package-lock.json')]) {
    const entry = field(await readJson(join(project, lock)), 'packages', key);
    const resolved = field(entry, 'resolved');
    // A link's `resolved` is its target, relative, with no `file:`.
    if (typeof resolved === 'string' && resolved) return fromSpec(field(entry, 'link') === true ? `file:${resolved}` : resolved, project, version, false);
  }
  const pkg = await readJson(join(project, 'package.json'));
  for (const deps of ['dependencies', 'devDependencies', 'optionalDependencies']) {
    const spec = field(pkg, deps, 'toolwire');
    if (typeof spec === 'string' && spec) return fromSpec(spec, project, version, true);
  }
  return `file:${real}`;
}
