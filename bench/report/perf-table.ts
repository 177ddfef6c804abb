import { microsPerRequest, type PerfSummary } from '../perf-profile.js';
import { withoutRound } from '../scenario-id.js';

/** What the table reads of a scenario: its id, its profile, and the answers of its measured phase. */
export interface ProfiledScenario {
  readonly id: string;
  readonly perf: PerfSummary | undefined;
  readonly answered: number | undefined;
}

const OTHER_THREADS = "the process's other threads";
const MAIN_TOTAL = 'main thread, all';

/**
 * The main thread's CPU a request by area, and the other threads', for each scenario with a
 * profile, its rounds pooled (samples over answers): one column a scenario, areas as rows,
 * most costly first. Empty when no scenario was profiled.
 */
export function perfTable(scenarios: readonly ProfiledScenario[]): string[] {
  const pooled = new Map<string, { samples: Map<string, number>; answered: number; frequencyHz: number }>();
  for (const s of scenarios) {
    if (!s.perf || !s.answered) continue;
    // A scenario's rounds pooled: `toolwire-single-r3` counts as `toolwire-single`.
    const id = withoutRound(s.id);
    const p = pooled.get(id) ?? { samples: new Map<string, number>(), answered: 0, frequencyHz: s.perf.frequencyHz };
    pooled.set(id, p);
    p.answered += s.answered;
    const add = (area: string, n: number) => p.samples.set(area, (p.samples.get(area) ?? 0) + n);
    for (const [area, n] of Object.entries(s.perf.mainThread)) {
      add(area, n);
      add(MAIN_TOTAL, n);
    }
    add(OTHER_THREADS, s.perf.otherThreads);
  }
  if (pooled.size === 0) return [];
  const ids = [...pooled.keys()];
  const us = (id: string, area: string) => {
    const p = pooled.get(id)!;
    return microsPerRequest(p.samples.get(area) ?? 0, p.frequencyHz, p.answered);
  };
  const areas = [...new Set(ids.flatMap((id) => [...pooled.get(id)!.samples.keys()]))].filter((a) => a !== MAIN_TOTAL && a !== OTHER_THREADS);
  areas.sort((a, b) => Math.max(...ids.map((id) => us(id, b))) - Math.max(...ids.map((id) => us(id, a))));
  const row = (area: string, bold = false) => {
    const cells = ids.map((id) => us(id, area).toFixed(1));
    return `| ${bold ? `**${area}**` : area} | ${cells.join(' | ')} |`;
  };
  return [
    '',
    '## On-CPU profiles (perf)',
    '',
    "µs of CPU a request, over each measured phase, rounds pooled: each target's main thread by area, then its other threads. " +
      "An area is the first of pulsar-client's native code, V8's collector or a JavaScript file met from the sampled frame up; " +
      "V8's builtins (JSON, promises) count for the JavaScript that called them. JIT code's names come from `--perf-basic-prof`, whose map can name reused code after what ran there first: read a small area with care.",
    '',
    `| area | ${ids.join(' | ')} |`,
    `|---|${ids.map(() => '---:').join('|')}|`,
    row(MAIN_TOTAL, true),
    ...areas.map((a) => row(a)),
    row(OTHER_THREADS, true),
  ];
}
