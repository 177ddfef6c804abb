import { readFile } from 'node:fs/promises';

/** The parts of a V8 `.cpuprofile` (node --cpu-prof) this summary reads. */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface ProfileRow {
  readonly name: string;
  readonly selfMs: number;
  readonly selfPct: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly idleMs: number;
  /** Self time by function (top N). */
  readonly functions: readonly ProfileRow[];
  /** Self time by area: our modules by directory, dependencies by package, V8/GC/native. */
  readonly areas: readonly ProfileRow[];
}

/** Where a frame's code lives: `src/worker`, `ws`, `pino`, `(garbage collector)`... */
export function areaOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const own = /\/(?:dist|src)\/([^/]+)(?:\/([^/]+))?\//.exec(url);
  if (own) return own[2] && !own[2].endsWith('.js') ? `toolwire/${own[1]}/${own[2]}` : `toolwire/${own[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url.split('/').slice(-1)[0] ?? url;
}

/** Self time per function and per area from a `.cpuprofile`, idle excluded from the percentages. */
export async function summarizeCpuProfile(path: string, top = 25): Promise<ProfileSummary> {
  const p = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const fns = new Map<string, number>();
  const areas = new Map<string, number>();
  let idle = 0;
  let total = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    total += us;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') {
      if (functionName === '(idle)') idle += us;
    }
    const name = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${lineNumber + 1}` : ''}`.trim();
    fns.set(name, (fns.get(name) ?? 0) + us);
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const busy = Math.max(1, total - idle);
  const rows = (m: Map<string, number>, n: number): ProfileRow[] =>
    [...m]
      .filter(([k]) => k !== '(idle)' && !k.startsWith('(idle) '))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, selfMs: us / 1000, selfPct: (us * 100) / busy }));
  return { totalMs: total / 1000, idleMs: idle / 1000, functions: rows(fns, top), areas: rows(areas, top) };
}

export function formatProfileSummary(s: ProfileSummary): string {
  const line = (r: ProfileRow) => `${r.selfPct.toFixed(1).padStart(5)}%  ${r.selfMs.toFixed(0).padStart(7)} ms  ${r.name}`;
  return [
    `total ${s.totalMs.toFixed(0)} ms, idle ${s.idleMs.toFixed(0)} ms, busy ${(s.totalMs - s.idleMs).toFixed(0)} ms (percentages of busy)`,
    '',
    'by area:',
    ...s.areas.map(line),
    '',
    'by function (self):',
    ...s.functions.map(line),
    '',
  ].join('\n');
}
