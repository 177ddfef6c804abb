import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, relative } from 'node:path';
import type { Logger } from 'pino';
import type { BenchOptions } from './bench-options.js';
import { allScenarios, newRunId, planScenarios, runScenario, scenarioBatches, warmBrokerFirst, type ScenarioResult } from './bench-runner.js';
import { startTogether } from './start-together.js';
import { machineInfo } from './machine-info.js';
import type { ProgressReporter } from './progress.js';
import type { BenchReport } from './report/bench-report.js';
import { markdownReport } from './report/markdown-report.js';
import { svgChart } from './report/svg-chart.js';
import { checkTargets, computeRatios } from './report/target-checks.js';

export interface BenchFiles {
  readonly json: string;
  readonly markdown: string;
  readonly chart: string;
}

/**
 * Measure every planned scenario in one run against one broker, then write
 * `<outDir>/<runId>.json`, `.md` and `.svg`, and the same as `latest.*`.
 */
export async function runBench(
  o: BenchOptions,
  command: string,
  deps: { log: Logger; progress: ProgressReporter; signal: AbortSignal; only?: readonly string[] },
): Promise<{ report: BenchReport; files: BenchFiles }> {
  const runId = newRunId();
  const startedAt = new Date().toISOString();
  const machine = await machineInfo(o.broker, o.python);
  await mkdir(o.outDir, { recursive: true });
  const profileDir = o.cpuProf ? join(o.outDir, `${runId}-profiles`) : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const only = deps.only;
  const scenarios = warmBrokerFirst(only === undefined ? planScenarios(o) : allScenarios(o).filter((s) => only.includes(s.id)), o);
  deps.progress.note(`npm run bench -- ${runId}: ${scenarios.map((s) => s.id).join(', ')}`);
  const results: ScenarioResult[] = [];
  for (const batch of scenarioBatches(scenarios, o.together === true)) {
    if (deps.signal.aborted) break;
    if (batch.length === 1) {
      results.push(await runScenario(o, runId, batch[0]!, { ...deps, profileDir }));
      continue;
    }
    // A round's targets at once, each on its own topics with its own agents: see BenchOptions.together.
    const starts = startTogether(batch.length);
    results.push(...(await Promise.all(batch.map((s, i) => runScenario(o, runId, s, { ...deps, profileDir, startLoad: starts[i]! })))));
  }
  const ratios = computeRatios(results);
  const { broker, python: _python, ...rest } = o;
  const report: BenchReport = {
    runId,
    startedAt,
    finishedAt: new Date().toISOString(),
    command,
    machine,
    loadAverageEnd: loadavg()[0] ?? 0,
    options: { ...rest, broker: broker?.adminUrl },
    scenarios: results,
    ratios,
    checks: checkTargets(ratios, scenarios.find((s) => s.id === 'toolwire-long')?.requests),
  };
  const files: BenchFiles = { json: join(o.outDir, `${runId}.json`), markdown: join(o.outDir, `${runId}.md`), chart: join(o.outDir, `${runId}.svg`) };
  const svg = svgChart(results, `npm run bench -- ${runId}: concurrency ${o.concurrency}, ${o.argumentBytes} B arguments, ${o.transport}`);
  const md = markdownReport(report, relative(o.outDir, files.chart));
  const json = `${JSON.stringify(report, null, 2)}\n`;
  await writeFile(files.json, json);
  await writeFile(files.markdown, md);
  await writeFile(files.chart, svg);
  await writeFile(join(o.outDir, 'latest.json'), json);
  await writeFile(join(o.outDir, 'latest.md'), md.replace(relative(o.outDir, files.chart), 'latest.svg'));
  await writeFile(join(o.outDir, 'latest.svg'), svg);
  return { report, files };
}
