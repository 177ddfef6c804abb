import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './child-process.js';

const run = promisify(execFile);

/** What importing one module costs a fresh process. */
export interface ModuleCost {
  readonly specifier: string;
  /** Heap in use after a full collection, less the same before the import. */
  readonly heapBytes: number;
  readonly rssBytes: number;
  readonly importMs: number;
}

/**
 * What a worker and the floor load at start, each measured alone in a fresh Node (so a
 * module's figure includes what it imports in turn): the dependencies that load with the
 * worker's own modules, the worker's whole `run` command, and the floor's code. Bare names
 * resolve from the repository, as the worker's imports do.
 */
export const STARTUP_MODULES = [
  'zod',
  'prom-client',
  'pino',
  'ws',
  'yaml',
  'lossless-json',
  'p-limit',
  './dist/settings.js',
  './dist/catalog/descriptors.js',
  './dist/metrics/worker-metrics.js',
  './dist/transport/pulsar-ws-transport.js',
  './dist/assembly/app.js',
  './dist/cli/commands/run.js',
  './build/bench/serve-floor.js',
] as const;

// Collect, read, import, collect, read: the import's own heap, not its garbage.
const SCRIPT = `
const gc = globalThis.gc;
gc(); gc();
const before = process.memoryUsage();
const t0 = performance.now();
await import(process.argv[1]);
const importMs = performance.now() - t0;
gc(); gc();
const after = process.memoryUsage();
process.stdout.write(JSON.stringify({ heapBytes: after.heapUsed - before.heapUsed, rssBytes: after.rss - before.rss, importMs }));
`;

/** One module's cost: the median of `rounds` fresh processes. */
export async function moduleCost(specifier: string, rounds: number, signal?: AbortSignal): Promise<ModuleCost> {
  const runs: Omit<ModuleCost, 'specifier'>[] = [];
  for (let i = 0; i < rounds; i++) {
    const { stdout } = await run(process.execPath, ['--expose-gc', '--input-type=module', '-e', SCRIPT, specifier], { cwd: REPO_ROOT, signal });
    runs.push(JSON.parse(stdout) as Omit<ModuleCost, 'specifier'>);
  }
  const mid = <K extends keyof Omit<ModuleCost, 'specifier'>>(k: K) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
  return { specifier, heapBytes: mid('heapBytes'), rssBytes: mid('rssBytes'), importMs: mid('importMs') };
}
