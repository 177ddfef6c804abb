import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';

/**
 * On-CPU profiles of a target process with Linux `perf`, sampling on the kernel's clock
 * (`cpu-clock`): it needs no hardware counters, which shared VMs lack, and unlike a V8
 * `--cpu-prof` it counts only time on a CPU, and sees into native code (pulsar-client,
 * libpulsar, the allocator, the collector). A V8 profile counts a call blocked on a lock or
 * descheduled by a busy machine as the JavaScript that made it.
 */

/** Samples a second, per thread on a CPU. */
export const PERF_FREQUENCY_HZ = 999;

/** What one target's main thread spent its samples on, and the rest of its threads. */
export interface PerfSummary {
  readonly frequencyHz: number;
  /** Samples of the main thread (the event loop), by area (see areaOf). */
  readonly mainThread: Readonly<Record<string, number>>;
  /** Samples of every other thread of the process (libpulsar's, V8's helpers, libuv's pool). */
  readonly otherThreads: number;
}

/** A `perf record` attached to one process until stop(). */
export class PerfRecording {
  private readonly exited: Promise<number | null>;
  /** What perf said, for the error when it fails (no perf, no permission). */
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly file: string,
  ) {
    child.stderr?.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString('utf8')).slice(-2000)));
    this.exited = new Promise((resolve, reject) => {
      child.once('exit', (code) => resolve(code));
      child.once('error', reject);
    });
    this.exited.catch(() => undefined);
  }

  static start(pid: number, file: string): PerfRecording {
    const child = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(PERF_FREQUENCY_HZ), '-g', '-p', String(pid), '-o', file, '-q'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return new PerfRecording(child, file);
  }

  /** Ends the recording; perf writes its file as it leaves. Rejects, saying why, when perf could not run. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
    let code: number | null;
    try {
      code = await this.exited;
    } catch (err) {
      throw new Error(`--perf needs Linux perf on the PATH (Debian: linux-perf): ${(err as Error).message}`);
    }
    if (code !== 0 && code !== null) throw new Error(`perf record exited with code ${code}: ${this.stderr.trim()}`);
  }
}

/** One stack of `perf script -F tid,ip,sym,dso`: the thread, and its frames from the leaf up. */
export interface PerfStack {
  readonly tid: number;
  readonly frames: readonly { readonly sym: string; readonly dso: string }[];
}

/** A frame line: address, symbol (which may hold spaces and parentheses), and `(dso)` last. */
const FRAME = /^\s+[0-9a-f]+\s+(.*)\s+\(([^()]*)\)$/;

/** A sample's first line: its thread id alone, padded to the widest id's width. */
const SAMPLE = /^\s*(\d+)\s*$/;

/** Stacks of `perf script -F tid,ip,sym,dso` output, one per sample. */
export async function* perfStacks(lines: AsyncIterable<string>): AsyncGenerator<PerfStack> {
  let tid: number | undefined;
  let frames: { sym: string; dso: string }[] = [];
  for await (const line of lines) {
    if (line.trim() === '') {
      if (tid !== undefined) yield { tid, frames };
      tid = undefined;
      frames = [];
    } else if (SAMPLE.test(line)) {
      tid = Number.parseInt(line, 10);
    } else {
      const m = FRAME.exec(line);
      if (m) frames.push({ sym: m[1]!, dso: m[2]! });
    }
  }
  if (tid !== undefined) yield { tid, frames };
}

/** Native code of pulsar-client: its addon, libpulsar under it, and libpulsar's protobuf. */
const BINDING_DSO = /(^|\/)(pulsar\.node|libpulsar\.so[\w.]*|libprotobuf\.so[\w.]*)$/;

/** V8's collector, entered from anywhere (an allocation, a task, an idle notification). */
const COLLECTOR = /Heap::CollectGarbage|Heap::PerformGarbageCollection|ScavengerCollector|MarkCompactCollector|MinorMarkCompact|IncrementalMarking/;

/**
 * A JavaScript function, as `--perf-basic-prof` names it, its script last:
 * `JS:*answer file:///.../request-handler.js:181:17`, `JS:*get deliveryKey file:///...`.
 */
const JS_FRAME = /^(?:JS|LazyCompile|Function):.*?\s(\S+?)(?::\d+){0,2}$/;

/**
 * The area one main-thread sample counts for, from the leaf up: the first of pulsar-client's
 * native code, the collector, or a JavaScript function (by source file) decides. V8's builtins
 * and runtime (JSON, promises, property lookups) count for the JavaScript that called them.
 */
export function areaOf(stack: PerfStack): string {
  for (const { sym, dso } of stack.frames) {
    if (BINDING_DSO.test(dso)) return 'pulsar-client (native)';
    if (COLLECTOR.test(sym)) return 'garbage collector';
    const js = JS_FRAME.exec(sym);
    if (js) return `js ${sourceArea(js[1]!)}`;
  }
  return 'event loop, kernel and the rest';
}

/** A script's place, short: `toolwire src/worker/request-handler.js`, `p-limit`, `node:internal/...`. */
export function sourceArea(url: string): string {
  if (url.startsWith('node:')) return 'node internals';
  const path = url.replace(/^file:\/\//, '');
  const dep = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  if (dep) return dep[1]!;
  const own = /\/(dist|build\/src|build\/bench)\/(.+)$/.exec(path);
  if (own) return own[1] === 'build/bench' ? `bench ${own[2]}` : `toolwire ${own[2]}`;
  return path.split('/').slice(-2).join('/');
}

/** Count a process's samples: its main thread by area, its other threads together. */
export async function summarizeStacks(stacks: AsyncIterable<PerfStack>, pid: number): Promise<PerfSummary> {
  const mainThread: Record<string, number> = {};
  let otherThreads = 0;
  for await (const stack of stacks) {
    if (stack.tid !== pid) {
      otherThreads++;
      continue;
    }
    const area = areaOf(stack);
    mainThread[area] = (mainThread[area] ?? 0) + 1;
  }
  return { frequencyHz: PERF_FREQUENCY_HZ, mainThread, otherThreads };
}

/** Where `--perf-basic-prof` names the JavaScript of process `pid` for perf. */
export const perfMapOf = (pid: number) => `/tmp/perf-${pid}.map`;

/** Read a recording of `pid` back; its JavaScript names come from the process's perf map. */
export async function summarizeRecording(file: string, pid: number): Promise<PerfSummary> {
  const script = spawn('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise<number | null>((resolve, reject) => {
    script.once('exit', resolve);
    script.once('error', reject);
  });
  // It may fail (no perf) while the stacks are read: handled now, awaited after.
  exited.catch(() => undefined);
  const summary = await summarizeStacks(perfStacks(createInterface({ input: script.stdout })), pid);
  const code = await exited;
  if (code !== 0) throw new Error(`perf script exited with code ${String(code)}`);
  return summary;
}

/** A recording and the target's perf map run to megabytes: removed once read, or once the run failed. */
export async function removePerfFiles(file: string, pid: number | undefined): Promise<void> {
  await rm(file, { force: true });
  if (pid !== undefined) await rm(perfMapOf(pid), { force: true });
}

/** µs of CPU a request, from samples over the requests answered while they were taken. */
export function microsPerRequest(samples: number, frequencyHz: number, requests: number): number {
  return requests > 0 ? (samples / frequencyHz / requests) * 1e6 : Number.NaN;
}
