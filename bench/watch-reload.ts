import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './child-process.js';
import { HEAP_ASK, type HeapAnswer } from './heap-probe.js';

const HEAP_PROBE_URL = pathToFileURL(join(REPO_ROOT, 'build', 'bench', 'heap-probe.js')).href;

export interface WatchReloadOptions {
  /** The toolwire checkout to run (built: bin/ and dist/); a worktree of an older commit gives the "before". */
  readonly checkout: string;
  readonly saves: number;
  /** How long one save may take to be served before the run fails. */
  readonly deadlineMs: number;
  readonly signal: AbortSignal;
}

export interface WatchReloadResult {
  readonly checkout: string;
  readonly saves: number;
  /** Save -> the new code answering a gateway call, in ms. */
  readonly reloadMs: { readonly median: number; readonly p90: number; readonly max: number };
  /** Save of a type error -> the worker's refusal logged, in ms (undefined: never refused, no type check). */
  readonly typeErrorMs: number | undefined;
  /** `module changed` log lines per save (median). */
  readonly changeLinesPerSave: number;
  /** Services the worker replaced per save (median); one module of two was saved. */
  readonly servicesReplacedPerSave: number;
  readonly rssMb: { readonly afterFirstSave: number; readonly afterLastSave: number };
  /** The heap still in use after a full collection: what the process keeps. */
  readonly liveHeapMb: { readonly afterFirstSave: number; readonly afterLastSave: number };
}

/** A typed tool whose answer names the save it came from; `other.ts` beside it is never edited. */
function toolSource(name: string, version: number, broken = false): string {
  const typeError = broken ? `\nconst wrong: number = 'not a number';\nexport { wrong };\n` : '';
  return `import { defineTool, z } from 'toolwire';

export const ${name} = defineTool({
  name: '${name}',
  description: 'Answers with the save it came from',
  arguments: z.object({ who: z.string().describe('Who asks') }),
  run: ({ who }) => \`v${version}: \${who}\`,
});
${typeError}`;
}

/**
 * `toolwire run --watch` as a developer runs it (a real process, embedded transport, a
 * project with its own typescript, so each save is type checked): one module saved `saves`
 * times, each save timed until a gateway call answers with the new code; then a save with a
 * type error, timed until it is refused. Also counted: the log lines a save makes and the
 * services it reloads (two modules share the folder), and the process's RSS.
 */
export async function runWatchReload(o: WatchReloadOptions): Promise<WatchReloadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'watch-reload-'));
  let child: ChildProcess | undefined;
  try {
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
    // As \`toolwire init\`'s project has them: toolwire linked from its checkout (a file:
    // dependency), and the project's own typescript.
    await mkdir(join(dir, 'node_modules'));
    await symlink(o.checkout, join(dir, 'node_modules', 'toolwire'), 'dir');
    await symlink(join(REPO_ROOT, 'node_modules', 'typescript'), join(dir, 'node_modules', 'typescript'), 'dir');
    await mkdir(join(dir, 'tools'));
    await writeFile(join(dir, 'tools', 'hello.ts'), toolSource('hello', 0));
    await writeFile(join(dir, 'tools', 'other.ts'), toolSource('other', 0));
    for (const service of ['hello', 'other']) {
      await exec(o.checkout, ['module', 'import', `tools/${service}.ts`, '--service', service, '--out', 'config'], dir, o.signal);
    }
    let log = '';
    child = spawn(
      process.execPath,
      [join(o.checkout, 'bin', 'toolwire.js'), 'run', '--watch', '--config-dir', 'config', '--http-port', '0', '--log-format', 'json'],
      {
        cwd: dir,
        env: {
          ...process.env,
          PULSAR_URL: '',
          PULSAR_ADMIN_URL: '',
          TOOLWIRE_TRANSPORT: 'memory',
          LOG_LEVEL: 'info',
          NODE_OPTIONS: `--expose-gc --import ${HEAP_PROBE_URL}`,
        },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const pid = child.pid!;
    const worker = child;
    await until(
      () => /"http":"http:\/\/[^"]+"/.test(log),
      o.deadlineMs,
      'the worker serving',
      () => log,
      o.signal,
    );
    const base = /"http":"(http:\/\/[^"]+)"/.exec(log)![1]!;
    await until(
      async () => (await answer(base)) === 'v0: bench',
      o.deadlineMs,
      'the first answer',
      () => log,
      o.signal,
    );

    const reloads: number[] = [];
    const changeLines: number[] = [];
    const replaced: number[] = [];
    let first = { rssMb: 0, heapMb: 0 };
    for (let save = 1; save <= o.saves; save++) {
      const logAt = log.length;
      const started = performance.now();
      await writeFile(join(dir, 'tools', 'hello.ts'), toolSource('hello', save));
      await until(
        async () => (await answer(base)) === `v${save}: bench`,
        o.deadlineMs,
        `save ${save} served`,
        () => log,
        o.signal,
      );
      reloads.push(performance.now() - started);
      // Late lines of this save (a second watch event) count for it: the log settles first.
      await settle(() => log.length, o.signal);
      const lines = log.slice(logAt).split('\n');
      changeLines.push(lines.filter((line) => line.includes('module changed')).length);
      replaced.push(lines.filter((line) => line.includes('"services changed"')).reduce((n, line) => n + replacedCount(line), 0));
      if (save === 1) first = await memory(worker, pid, o.signal);
    }
    const last = await memory(worker, pid, o.signal);

    const logAt = log.length;
    const started = performance.now();
    await writeFile(join(dir, 'tools', 'hello.ts'), toolSource('hello', o.saves + 1, true));
    const refused = await until(
      () => /TS2322/.test(log.slice(logAt)),
      o.deadlineMs,
      'the type error refused',
      () => log,
      o.signal,
    ).then(
      () => performance.now() - started,
      () => undefined,
    );
    const sorted = [...reloads].sort((a, b) => a - b);
    return {
      checkout: o.checkout,
      saves: o.saves,
      reloadMs: { median: Math.round(percentile(sorted, 0.5)), p90: Math.round(percentile(sorted, 0.9)), max: Math.round(sorted.at(-1) ?? 0) },
      typeErrorMs: refused === undefined ? undefined : Math.round(refused),
      changeLinesPerSave: median(changeLines),
      servicesReplacedPerSave: median(replaced),
      rssMb: { afterFirstSave: first.rssMb, afterLastSave: last.rssMb },
      liveHeapMb: { afterFirstSave: first.heapMb, afterLastSave: last.heapMb },
    };
  } finally {
    child?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

/** The gateway's answer to `hello` (the response text; '' for an error or a refused call). */
async function answer(base: string): Promise<string> {
  try {
    const res = await fetch(`${base}/v1/tools/hello/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { who: 'bench' } }),
    });
    const text = await res.text();
    if (res.status !== 200) return '';
    return text
      .split('\n\n')
      .filter((event) => event.startsWith('data: '))
      .map((event) => (JSON.parse(event.slice(6)) as { response?: string }).response ?? '')
      .join('');
  } catch {
    return '';
  }
}

function replacedCount(line: string): number {
  try {
    return ((JSON.parse(line) as { replaced?: unknown[] }).replaced ?? []).length;
  } catch {
    return 0;
  }
}

/** The RSS as it stands (from /proc, before the probe collects anything), then the heap live after a full collection. */
async function memory(child: ChildProcess, pid: number, signal: AbortSignal): Promise<{ rssMb: number; heapMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssMb = Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
  child.send({ type: HEAP_ASK });
  const [answer] = (await Promise.race([
    once(child, 'message', { signal }),
    delay(10_000, undefined, { signal }).then(() => Promise.reject(new Error('the heap probe did not answer'))),
  ])) as [HeapAnswer];
  return { rssMb, heapMb: Math.round(answer.heapUsedBytes / 1e5) / 10 };
}

/** Polls `cond` every 10 ms (a reload's time is read to that grain) until it holds or `deadlineMs` passes. */
async function until(cond: () => boolean | Promise<boolean>, deadlineMs: number, what: string, log: () => string, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}; the worker's log ends:\n${log().slice(-2000)}`);
    await delay(10, undefined, { signal });
  }
}

/** Waits until the log has not grown for 300 ms (what one save logs has all arrived). */
async function settle(length: () => number, signal: AbortSignal): Promise<void> {
  let seen = length();
  let quietSince = Date.now();
  while (Date.now() - quietSince < 300) {
    await delay(20, undefined, { signal });
    if (length() !== seen) {
      seen = length();
      quietSince = Date.now();
    }
  }
}

function exec(checkout: string, args: readonly string[], cwd: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [join(checkout, 'bin', 'toolwire.js'), ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], signal });
    let err = '';
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.once('error', reject);
    c.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`toolwire ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

/** The figures as the bench prints them. */
export function formatWatchReload(r: WatchReloadResult): string {
  return [
    `watch-reload (${r.checkout}, ${r.saves} saves)`,
    `  reload (save -> new code answering): median ${r.reloadMs.median} ms, p90 ${r.reloadMs.p90} ms, max ${r.reloadMs.max} ms`,
    `  type error reported after: ${r.typeErrorMs === undefined ? 'never' : `${r.typeErrorMs} ms`}`,
    `  per save: ${r.changeLinesPerSave} 'module changed' line(s), ${r.servicesReplacedPerSave} service(s) replaced (of 2; one module saved)`,
    `  RSS: ${r.rssMb.afterFirstSave} MB after 1 save, ${r.rssMb.afterLastSave} MB after ${r.saves}`,
    `  heap live after a full GC: ${r.liveHeapMb.afterFirstSave} MB after 1 save, ${r.liveHeapMb.afterLastSave} MB after ${r.saves}`,
    '',
  ].join('\n');
}
