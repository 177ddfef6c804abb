import type { BrokerDrops } from '../broker-drops.js';
import type { ScenarioResult } from '../bench-runner.js';
import type { BenchReport } from './bench-report.js';
import { QUIET_STEAL_PCT, signed, type BaselineFigures } from './target-checks.js';
import type { MedianInterval } from './median-interval.js';
import type { ResourceSummary } from '../resource-sample.js';
import { perfTable } from './perf-table.js';

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const int = (v: number) => Math.round(v).toLocaleString('en-US');
/** The collector's pauses: µs a request in all, then how many full collections and the longest, ms. */
const gcCell = (res: ResourceSummary | undefined) =>
  res?.gc ? `${int(res.gc.pauseUsPerRequest)} · ${res.gc.majorCount} · ${res.gc.majorCount > 0 ? ms(res.gc.majorMaxMs) : '-'}` : 'n/a';
/** The process's CPU a request, and its main thread's part in brackets where it was read. */
const cpuCell = (res: ResourceSummary | undefined) =>
  res?.cpuUsPerRequest === undefined
    ? ''
    : `${int(res.cpuUsPerRequest)}${res.mainThreadCpuUsPerRequest === undefined ? '' : ` (${int(res.mainThreadCpuUsPerRequest)})`}`;
/**
 * The machine's CPU an answer took: all of it, the target's, the agents' (this bench's own
 * process) and the rest (the broker, mostly). At full use of the machine, 10^6 x CPUs over
 * the first is the most this run could answer a second, and over agents plus rest, the most
 * any target could with these agents on this broker. n/a when the round's targets ran together,
 * sharing the machine and the agents' process, or a figure was not read.
 */
function machineCell(s: ScenarioResult, cpus: number, together: boolean): string {
  const rate = s.load?.throughputPerSec;
  if (together || !s.machine || !rate) return 'n/a';
  const perAnswer = (pct: number): number => ((pct / 100) * cpus * 1e6) / rate;
  const all = perAnswer(s.machine.busyPct);
  const target = s.resources?.cpuUsPerRequest;
  const agents = s.machine.ownPct === undefined ? undefined : perAnswer(s.machine.ownPct);
  const rest = target === undefined || agents === undefined ? undefined : all - target - agents;
  const cell = (v: number | undefined): string => (v === undefined ? 'n/a' : int(v));
  return `${cell(all)} / ${cell(target)} / ${cell(agents)} / ${cell(rest)}`;
}
/** n/a where a topic keeps what it cannot hand out (persistent) or no count was read. */
const dropped = (d: BrokerDrops | undefined) => `${d?.requests !== undefined ? int(d.requests) : 'n/a'} / ${d?.answers !== undefined ? int(d.answers) : 'n/a'}`;

/** The report as Markdown: machine, scenario table, ratios against the targets. */
export function markdownReport(r: BenchReport, chartFile: string | undefined): string {
  const m = r.machine;
  const o = r.options;
  const lines: string[] = [];
  lines.push(`# npm run bench -- ${r.runId}`, '');
  lines.push(`${r.startedAt} to ${r.finishedAt}  `);
  lines.push(
    `Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}; load average ${m.loadAverage.toFixed(2)} at start, ${r.loadAverageEnd.toFixed(2)} at the end  `,
  );
  lines.push(
    `Node ${m.node}; Pulsar ${m.pulsar}; Python ${m.python ?? 'n/a'}, trustgraph-base ${m.trustgraphBase ?? 'n/a'}${m.preload ? `; every process with LD_PRELOAD=${m.preload}` : ''}  `,
  );
  lines.push(
    `Transport ${o.transport} (agents and floor/toolwire), concurrency ${o.concurrency}, ${o.argumentBytes} B arguments, ` +
      `${o.requests !== undefined ? `${int(o.requests)} requests` : `${o.durationMs / 1000} s`} per scenario after ${o.warmupMs / 1000} s warm-up, ` +
      `${o.requestPersistence} request and ${o.responsePersistence} response topics, answers lost after ${o.answerTimeoutMs / 1000} s, worker log level ${o.workerLogLevel}` +
      `${o.together ? "; each round's targets ran at the same time, each with its own agents (--together)" : ''}  `,
  );
  lines.push(`Reproduce: \`${r.command}\``, '');
  lines.push(
    '| scenario | served by | answered | req/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors | RSS start/end MB | CPU µs/req (main thread) | ELD p99 max ms | GC pause µs/req · full GCs · longest ms | machine busy / stolen % | machine CPU µs/req: all / target / agents / rest | broker dropped: requests / answers |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of r.scenarios) {
    const l = s.load;
    if (!l) {
      lines.push(`| ${s.scenario.id} | ${s.description} | failed: ${(s.error ?? '').split('\n')[0]} | | | | | | | | | | | | | | |`);
      continue;
    }
    const res = s.resources;
    lines.push(
      `| ${s.scenario.id} | ${s.description} | ${int(l.answered)} | ${int(l.throughputPerSec)} | ${ms(l.latency.p50Ms)} | ${ms(l.latency.p90Ms)} | ${ms(l.latency.p99Ms)} | ${ms(l.latency.p999Ms)} | ${ms(l.latency.maxMs)} | ` +
        `${l.errors + l.timeouts + l.wrongAnswers} | ${res ? `${mb(res.rssStartBytes)} / ${mb(res.rssEndBytes)}` : ''} | ${cpuCell(res)} | ${res?.eldP99MaxMs !== undefined ? ms(res.eldP99MaxMs) : 'n/a'} | ${gcCell(res)} | ${s.machine ? `${s.machine.busyPct} / ${s.machine.stealPct}` : 'n/a'} | ${machineCell(s, m.cpus, o.together === true)} | ${dropped(s.drops)} |`,
    );
  }
  lines.push('', '## Targets', '', '| target | measured | met |', '|---|---:|:---:|');
  for (const c of r.checks) lines.push(`| ${c.goal} | ${c.measured} | ${c.met === undefined ? 'n/a' : c.met ? 'yes' : '**no**'} |`);
  const ra = r.ratios;
  if (ra.oneCall.length > 0) {
    lines.push('', '## One call in flight', '', 'Latency as an agent that waits for each answer sees it, ms.', '');
    lines.push('| request topic | floor p50 / p99 / p99.9 | toolwire p50 / p99 / p99.9 | toolwire added p50 / p99 / p99.9 |', '|---|---:|---:|---:|');
    const three = (a: number, b: number, c: number) => `${ms(a)} / ${ms(b)} / ${ms(c)}`;
    for (const x of ra.oneCall) {
      lines.push(
        `| ${x.kind} | ${three(x.floor.p50Ms, x.floor.p99Ms, x.floor.p999Ms)} | ${three(x.toolwire.p50Ms, x.toolwire.p99Ms, x.toolwire.p999Ms)} | ${three(x.p50AddedMs, x.p99AddedMs, x.p999AddedMs)} |`,
      );
    }
  }
  lines.push('', '## Ratios', '');
  const perRound =
    ra.rounds > 1
      ? ` (median of ${ra.rounds} rounds: ${ra.perRound.map((x) => `${x.throughputVsFloor.toFixed(3)} / ${x.p99AddedMs.toFixed(2)} ms`).join(', ')})`
      : '';
  const interval = (i: MedianInterval | undefined): string =>
    i ? ` (the median lies in ${i.low.toFixed(3)}-${i.high.toFixed(3)} with ${Math.floor(i.confidence * 100)}% confidence)` : '';
  const quiet = (q: BaselineFigures['quiet'], rounds: number): string =>
    q && rounds > 1
      ? `; in the ${q.rounds} of ${rounds} rounds with at most ${QUIET_STEAL_PCT}% of the CPU stolen: ${q.throughput.toFixed(3)}, p99 ${signed(q.p99DiffMs)}`
      : '';
  lines.push(
    `- toolwire/floor throughput: ${ra.throughputVsFloor?.toFixed(3) ?? 'n/a'}${interval(ra.throughputVsFloorInterval)}; p99 added ${ra.p99AddedMs?.toFixed(2) ?? 'n/a'} ms, p99.9 added ${ra.p999AddedMs?.toFixed(2) ?? 'n/a'} ms${perRound}${quiet(ra.quietVsFloor, ra.rounds)}`,
  );
  const versus = (label: string, f: BaselineFigures | undefined) => {
    if (!f) return;
    const each = f.perRound.map((x) => `${x.throughput.toFixed(3)} / ${signed(x.p99DiffMs)}`).join(', ');
    lines.push(
      `- ${label} throughput: ${f.throughput.toFixed(3)}${interval(f.throughputInterval)}; p99 ${signed(f.p99DiffMs)} against it (median of ${f.rounds} rounds: ${each})${quiet(f.quiet, f.rounds)}`,
    );
  };
  versus(`toolwire (${o.transport}) / floor (pulsar-ws)`, ra.vsWsFloor);
  versus(`toolwire/baseline (${o.baselineDir})`, ra.vsBaseline);
  lines.push(`- toolwire/peer throughput: ${ra.throughputVsPeer?.toFixed(2) ?? 'n/a'}; toolwire/peer p99: ${ra.p99VsPeer?.toFixed(3) ?? 'n/a'}`);
  lines.push(
    `- stream (${o.streamChunks} chunks) vs single, per request: worker CPU ${ra.streamCpuVsSingle?.toFixed(2) ?? 'n/a'}x, throughput cost ${ra.streamCostVsSingle?.toFixed(2) ?? 'n/a'}x, p50 ${ra.streamP50VsSingle?.toFixed(2) ?? 'n/a'}x`,
  );
  const long = r.scenarios.find((s) => s.scenario.id === 'toolwire-long')?.resources;
  const heap =
    long?.heapStartBytes !== undefined && long.heapEndBytes !== undefined ? `; V8 heap in use ${mb(long.heapStartBytes)} -> ${mb(long.heapEndBytes)} MB` : '';
  const warm = long ? `, ${mb(long.rssFirstBytes)} MB at the first sample of its warm-up` : '';
  lines.push(
    `- RSS over the long run: ${ra.longRunRssGrowth !== undefined ? `${(ra.longRunRssGrowth * 100).toFixed(1)}%${long ? ` (${mb(long.rssStartBytes)} -> ${mb(long.rssEndBytes)} MB${warm})` : ''}` : 'n/a'}${heap}`,
  );
  lines.push(...perfTable(r.scenarios.map((s) => ({ id: s.scenario.id, perf: s.perf, answered: s.load?.answered }))));
  if (chartFile) lines.push('', `![latency, throughput and RSS](${chartFile})`);
  lines.push('');
  return lines.join('\n');
}
