import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { ScenarioResult } from '../../../bench/bench-runner.js';
import { functionsMarkdown, loadRows } from '../../../bench/functions-command.js';
import type { LoadResult } from '../../../bench/load-generator.js';
import { processTree } from '../../../bench/resource-sampler.js';

function result(id: string, target: ScenarioResult['scenario']['target'], throughputPerSec: number | undefined): ScenarioResult {
  const load =
    throughputPerSec === undefined
      ? undefined
      : ({ answered: 100, throughputPerSec, latency: { p50Ms: throughputPerSec / 100, p99Ms: throughputPerSec / 10 } } as unknown as LoadResult);
  return {
    scenario: { id, target, stream: false, chunks: 0, requests: undefined, durationMs: 1000, purpose: 'test' },
    description: `${target} process`,
    topics: { serviceId: 's', requestTopic: 'r', responseTopic: 'q', subscription: 's' },
    load,
    resources:
      throughputPerSec === undefined
        ? undefined
        : ({ cpuUsPerRequest: throughputPerSec / 2, rssMaxBytes: 2 ** 20 * throughputPerSec } as unknown as ScenarioResult['resources']),
    series: [],
    error: load ? undefined : 'failed',
  };
}

describe('the functions report', () => {
  it('gives each target the median of its rounds and counts the rounds that failed', () => {
    const rows = loadRows([
      result('toolwire-single', 'toolwire', 300),
      result('functions-single', 'functions', 40),
      result('toolwire-single-r2', 'toolwire', 100),
      result('functions-single-r2', 'functions', undefined),
      result('toolwire-single-r3', 'toolwire', 200),
      result('functions-single-r3', 'functions', 60),
    ]);
    const toolwire = rows.find((r) => r.target === 'toolwire')!;
    expect(toolwire).toMatchObject({ rounds: 3, throughputPerSec: 200, p99Ms: 20, cpuUsPerRequest: 100, failedRounds: 0 });
    const functions = rows.find((r) => r.target === 'functions')!;
    expect(functions).toMatchObject({ rounds: 2, failedRounds: 1 });
    const markdown = functionsMarkdown(rows, [{ target: 'functions', how: 'localrun', startMs: [3000, 1000, 2000], rssAddedBytes: [2 ** 20] }], 'header');
    expect(markdown).toContain('| functions: localrun | 2000 ms (3000, 1000, 2000) | 1.0 MB |');
    expect(markdown).toContain('(1 failed)');
  });
});

describe('processTree', () => {
  it('lists a process and the children it started', async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore' });
    let tree: number[] = [];
    try {
      const deadline = Date.now() + 10_000;
      tree = await processTree(child.pid!);
      while (tree.length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        tree = await processTree(child.pid!);
      }
      expect(tree[0]).toBe(child.pid);
      expect(tree.length).toBe(2);
    } finally {
      // The sleep first: it is the shell's child, and would outlive it.
      for (const pid of tree.slice(1)) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
    }
  });
});
