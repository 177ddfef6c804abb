import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Files that load through the TypeScript loader, as they are, without a build step. */
const TYPESCRIPT = /\.(ts|mts|cts)$/;

export function isTypeScript(file: string): boolean {
  return TYPESCRIPT.test(file);
}

type Namespace = Record<string, unknown>;

/**
 * A resolve hook (Node's module.register) that hands a revision on: what a module of
 * revision N imports by a relative path (its own project's files) is imported at revision N
 * too, so an edited helper is read again with the tool that uses it. Whatever is imported by
 * a package name keeps one copy, shared with the worker, even when it resolves outside any
 * node_modules (a package linked with a file: dependency, as toolwire init's project links
 * toolwire): stamping those re-imported the whole package on every save, several MB each.
 */
const REVISION_HOOK = `export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  const m = context.parentURL ? /[?&]revision=([^&#]+)/.exec(context.parentURL) : null;
  const relative = specifier.startsWith('./') || specifier.startsWith('../');
  if (m && relative && r.url.startsWith('file:') && !r.url.includes('/node_modules/') && !r.url.includes('?')) return { ...r, url: r.url + '?revision=' + m[1] };
  return r;
}
`;

let typescriptLoader: Promise<void> | undefined;
let revisionHook = false;

/**
 * tsx's loader, registered for the process once, the first time a .ts module is asked for:
 * esbuild strips the types, with source maps, so a stack names the line of the .ts file.
 * Registered globally (not tsx's namespaced `tsImport`), so a tool's imports of toolwire,
 * zod and other packages are the worker's own copies, not second ones.
 */
function typescript(): Promise<void> {
  typescriptLoader ??= import('tsx/esm/api').then(({ register: registerTsx }) => {
    registerTsx();
    process.setSourceMapsEnabled(true);
  });
  return typescriptLoader;
}

/** One import per file: the newest revision's. A catalog check and the plugin it creates share it. */
const imported = new Map<string, { readonly revision: string; readonly module: Promise<Namespace> }>();

/**
 * A module file's namespace, TypeScript (through tsx) or JavaScript. A new `revision` (what
 * `run --watch` sets when a file changed) imports the file and the files it imports by a
 * relative path afresh, under a URL query. ESM has no unloading, so each revision's copies
 * of those files stay in memory until the process ends: one per saved change, never per
 * call, a few KB for a tool's own files (docs/benchmarks.md, watch-reload).
 */
export function importModuleFile(file: string, revision = ''): Promise<Namespace> {
  const seen = imported.get(file);
  if (seen && seen.revision === revision) return seen.module;
  const module = load(file, revision);
  imported.set(file, { revision, module });
  // A failed import is not kept: the next check tries again, and reports what is wrong then.
  module.catch(() => {
    if (imported.get(file)?.module === module) imported.delete(file);
  });
  return module;
}

async function load(file: string, revision: string): Promise<Namespace> {
  if (isTypeScript(file)) await typescript();
  if (revision && !revisionHook) {
    register(`data:text/javascript,${encodeURIComponent(REVISION_HOOK)}`);
    revisionHook = true;
  }
  const url = pathToFileURL(file).href;
  try {
    return (await import(revision ? `${url}?revision=${encodeURIComponent(revision)}` : url)) as Namespace;
  } catch (err) {
    throw isTypeScript(file) && COMMONJS_FAILURES.has((err as { code?: unknown }).code) ? readAsCommonJs(file, err) : err;
  }
}

/**
 * How Node refuses an ES module's syntax or imports in a file it reads as CommonJS: a `.ts`
 * file is CommonJS unless its package.json says `"type": "module"` (tsx follows Node's rule),
 * and Node's own words ("Cannot require() ES Module ... in a cycle") do not say so.
 */
const COMMONJS_FAILURES = new Set<unknown>(['ERR_REQUIRE_CYCLE_MODULE', 'ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE']);

function readAsCommonJs(file: string, cause: unknown): Error {
  if (extname(file) === '.cts') return new Error(`${file} is CommonJS (.cts), so its ES module syntax and imports fail: name it .mts`, { cause });
  const manifest = nearestPackageJson(dirname(file));
  const fix = manifest ? `add "type": "module" to ${manifest}` : `add a package.json that says "type": "module" to ${dirname(file)}`;
  return new Error(
    `${file} loads as CommonJS (${manifest ?? 'no package.json'} does not say "type": "module"), so its ES module syntax and imports fail: ${fix} (or name the file .mts)`,
    { cause },
  );
}

/** The package.json that rules on a file's module type: the nearest one up the tree. */
function nearestPackageJson(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, 'package.json');
    if (existsSync(candidate)) return candidate;
    if (dirname(at) === at) return undefined;
  }
}
