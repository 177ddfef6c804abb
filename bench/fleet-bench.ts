import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirectoryConfigStore } from '../src/config/directory-store.js';
import { ManagedChild } from './child-process.js';
import { fleetItems, fleetTool, fleetToolName, TOOLS_PER_SERVICE, writeItems, type FleetShape } from './fleet-config.js';
import { freePort } from './free-port.js';

/** A toolwire checkout with dist/ built, and how the report names it. */
export interface FleetBuild {
  readonly label: string;
  readonly dir: string;
}

export interface FleetBenchOptions {
  /** Fleet sizes, in services (each of 10 tools). */
  readonly sizes: readonly number[];
  readonly builds: readonly FleetBuild[];
  /** One-tool changes per fleet; the report gives their median. */
  readonly changes: number;
  /** Write a V8 CPU profile of each worker here. */
  readonly cpuProfDir?: string;
  readonly signal?: AbortSignal;
  readonly say: (line: string) => void;
}

export interface FleetFigures {
  readonly build: string;
  readonly services: number;
  readonly tools: number;
  /** From spawning `toolwire run` to /readyz answering 200. */
  readonly readyMs: number;
  /** Each one-tool change, from the file written to a call of that tool answering with it. */
  readonly changeMs: readonly number[];
  readonly changeMedianMs: number;
  /** `toolwire validate` on the same directory, as a process, start to exit. */
  readonly validateMs: number;
  /** The worker's resident set after the changes. */
  readonly rssBytes: number;
}

const READY_TIMEOUT_MS = 120_000;
const CHANGE_TIMEOUT_MS = 60_000;

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function pollUntil(what: string, timeoutMs: number, done: () => Promise<boolean>, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    signal?.throwIfAborted();
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The gateway's answer to a call of `tool` with no arguments, as text (Server-Sent Events); undefined when it cannot be had. */
async function callText(base: string, tool: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${base}/v1/tools/${encodeURIComponent(tool)}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    return await res.text();
  } catch {
    return undefined;
  }
}

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) * 1024;
}

/** `toolwire validate dir` of one build, timed from spawn to exit. */
async function timeValidate(build: FleetBuild, dir: string): Promise<number> {
  const started = performance.now();
  const child = new ManagedChild({
    command: process.execPath,
    args: [join(build.dir, 'bin', 'toolwire.js'), 'validate', dir],
    env: { ...process.env, LOG_LEVEL: 'warn' },
    ipc: false,
    label: `${build.label} validate`,
    cwd: build.dir,
  });
  const code = await child.ended;
  if (code !== 0) throw new Error(`${build.label}: toolwire validate exited ${String(code)}:\n${child.output().slice(-2000)}`);
  return performance.now() - started;
}

/**
 * One build on one fleet size: `toolwire run` as its own process (memory transport, the
 * directory source, the gateway on loopback); ready after start, then one-tool changes,
 * each in another service, each timed until a call of that tool through the gateway
 * answers with it; then its RSS and `toolwire validate` on the same directory.
 */
async function measureFleet(build: FleetBuild, services: number, o: FleetBenchOptions): Promise<FleetFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-fleet-'));
  const shape: FleetShape = {
    services,
    prefix: 'fleet',
    requestQueue: (n) => `persistent://tg/request/fleet-${n}`,
    responseQueue: 'non-persistent://tg/response/fleet',
    served: true,
  };
  let worker: ManagedChild | undefined;
  try {
    await writeItems(dir, fleetItems(shape));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    if (o.cpuProfDir) await mkdir(o.cpuProfDir, { recursive: true });
    const started = performance.now();
    worker = new ManagedChild({
      command: process.execPath,
      args: [...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []), join(build.dir, 'bin', 'toolwire.js'), 'run'],
      env: {
        ...process.env,
        TOOLWIRE_CONFIG_DIR: dir,
        TOOLWIRE_TRANSPORT: 'memory',
        TOOLWIRE_HTTP_PORT: String(port),
        TOOLWIRE_HTTP_HOST: '127.0.0.1',
        // Changes are seen by inotify; no poll in between to muddle the timings.
        TOOLWIRE_CONFIG_POLL_MS: '0',
        LOG_LEVEL: 'warn',
      },
      ipc: false,
      label: `${build.label} worker (${services} services)`,
      cwd: build.dir,
    });
    const running = worker;
    await pollUntil(
      `${running.spec.label} ready`,
      READY_TIMEOUT_MS,
      async () => {
        if (!running.running) throw new Error(`${running.spec.label} exited (${running.exitText}):\n${running.output().slice(-2000)}`);
        return (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200;
      },
      o.signal,
    );
    const readyMs = performance.now() - started;
    const store = new DirectoryConfigStore(dir);
    const changeMs: number[] = [];
    for (let k = 1; k <= o.changes; k++) {
      // Spread over the fleet: the first service, then further in.
      const n = Math.floor(((k - 1) * services) / o.changes);
      const t = k % TOOLS_PER_SERVICE;
      const version = `change-${k}-${Date.now().toString(36)}`;
      const tool = fleetToolName(shape, n, t);
      const before = await callText(base, tool);
      if (before === undefined || !before.includes('v0')) throw new Error(`${tool} does not answer v0 before its change: ${before ?? 'no answer'}`);
      const t0 = performance.now();
      await store.put([fleetTool(shape, n, t, version)]);
      await pollUntil(`change ${k} (${tool}) served`, CHANGE_TIMEOUT_MS, async () => (await callText(base, tool))?.includes(version) === true, o.signal);
      changeMs.push(performance.now() - t0);
    }
    const rssBytes = await rssOf(running.pid!);
    await running.stop(10_000);
    worker = undefined;
    const validateMs = await timeValidate(build, dir);
    return { build: build.label, services, tools: services * TOOLS_PER_SERVICE, readyMs, changeMs, changeMedianMs: median(changeMs), validateMs, rssBytes };
  } finally {
    await worker?.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every build at every size, one after the other, the builds alternating within a size. */
export async function runFleetBench(o: FleetBenchOptions): Promise<FleetFigures[]> {
  const figures: FleetFigures[] = [];
  for (const size of o.sizes) {
    for (const build of o.builds) {
      o.say(`fleet: ${build.label}, ${size} services...`);
      const f = await measureFleet(build, size, o);
      o.say(`  ${fleetRow(f)}`);
      figures.push(f);
    }
  }
  return figures;
}

function fleetRow(f: FleetFigures): string {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  return `| ${f.build} | ${f.services} | ${f.tools} | ${s(f.readyMs)} s | ${Math.round(f.changeMedianMs)} ms (${f.changeMs.map((ms) => Math.round(ms)).join(', ')}) | ${s(f.validateMs)} s | ${Math.round(f.rssBytes / 2 ** 20)} MB | ${Math.round(f.rssBytes / f.services / 1024)} KB |`;
}

/** The figures as a Markdown table, with each build's growth from its smallest fleet to its largest. */
export function fleetTable(figures: readonly FleetFigures[]): string {
  const lines = [
    '| build | services | tools | ready after start | one-tool change served after (median; each) | `toolwire validate` | RSS | RSS per service |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...figures.map(fleetRow),
  ];
  for (const label of new Set(figures.map((f) => f.build))) {
    const mine = figures.filter((f) => f.build === label).sort((left, right) => left.services - right.services);
    const small = mine[0];
    const large = mine[mine.length - 1];
    if (!small || !large || small === large) continue;
    const x = (a: number, b: number) => `${(a / b).toFixed(1)}x`;
    lines.push(
      '',
      `${label}, ${large.services} services against ${small.services}: ready ${x(large.readyMs, small.readyMs)}, one-tool change ${x(large.changeMedianMs, small.changeMedianMs)}, validate ${x(large.validateMs, small.validateMs)}, RSS ${x(large.rssBytes, small.rssBytes)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export async function writeFleetReport(outDir: string, figures: readonly FleetFigures[]): Promise<{ markdown: string; json: string }> {
  await mkdir(outDir, { recursive: true });
  const json = join(outDir, 'fleet-latest.json');
  const markdown = join(outDir, 'fleet-latest.md');
  await writeFile(json, `${JSON.stringify(figures, null, 2)}\n`);
  await writeFile(markdown, fleetTable(figures));
  return { markdown, json };
}
