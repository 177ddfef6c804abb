import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serviceDescriptor, toolDescriptor } from '../../support/descriptors.js';
import { startRun, type RunProcess } from '../../support/run-process.js';

function start(configDir: string): Promise<RunProcess> {
  return startRun(configDir, { env: { TOOLWIRE_SHUTDOWN_GRACE_MS: '5000' } });
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['bin/toolwire.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function invoke(base: string, tool: string, args: unknown): Promise<{ error: unknown; response: string; end_of_stream: boolean }[]> {
  const res = await fetch(`${base}/v1/tools/${tool}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  });
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice(6)) as { error: unknown; response: string; end_of_stream: boolean });
}

// Each test starts real processes: over 10 s on a loaded machine.
describe('toolwire run (a real process)', { timeout: 60_000 }, () => {
  let dir: string;
  let child: ChildProcess | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-run-'));
    await cp('config', dir, { recursive: true });
    // Runs until the test writes `release`: a fixed time let the first call end before the fifth began on a loaded machine.
    await writeFile(
      join(dir, 'slow.mjs'),
      "import { existsSync } from 'node:fs';\nexport default async ({ arguments: a }) => { while (!existsSync(new URL('./release', import.meta.url))) await new Promise((r) => setTimeout(r, 10)); return `slow ${a.n}`; };\n",
    );
    await writeFile(
      join(dir, 'tool-service', 'slow-service.json'),
      JSON.stringify(serviceDescriptor('slow-service', { plugin: { kind: 'module', module: './slow.mjs' } })),
    );
    await writeFile(join(dir, 'tool', 'slow.json'), JSON.stringify(toolDescriptor('slow', 'slow-service', { arguments: [{ name: 'n', type: 'number' }] })));
  });
  afterEach(async () => {
    child?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the examples: toolwire call tell-joke prints a joke, and an error exits 1', async () => {
    const run = await start(dir);
    child = run.child;
    const ok = await cli(['call', 'tell-joke', '--args', '{"topic":"programming"}', '--url', run.base]);
    expect(ok.code).toBe(0);
    const { JOKES } = await import('../../../src/plugins/module/builtin/joke.js');
    expect(JOKES.pun['programming']).toContain(ok.stdout.trim());
    const bad = await cli(['call', 'calculate', '--args', '{"expression":"1/0"}', '--url', run.base]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^invalid-arguments: .*division by zero/);
    // An error answer prints nothing on stdout, not even a newline.
    expect(bad.stdout).toBe('');
  });

  it('answers every in-flight request after SIGTERM before exiting', async () => {
    const run = await start(dir);
    child = run.child;
    const calls = Array.from({ length: 5 }, (_, n) => invoke(run.base, 'slow', { n }));
    // Wait until all five are running in the worker, then ask it to stop.
    await vi.waitFor(async () => expect(await (await fetch(`${run.base}/metrics`)).text()).toMatch(/^toolwire_requests_in_flight\{service="[^"]+"\} 5$/m), {
      timeout: 20_000,
      interval: 20,
    });
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', resolve));
    run.child.kill('SIGTERM');
    await vi.waitFor(() => expect(run.stderr()).toMatch(/"inFlight":5,.*"msg":"draining"/), { timeout: 20_000, interval: 20 });
    await writeFile(join(dir, 'release'), '');
    const answers = await Promise.all(calls);
    answers.forEach((events, n) => expect(events).toEqual([{ error: null, response: `slow ${n}`, end_of_stream: true }]));
    expect(await exited).toBe(0);
    expect(run.stderr()).toMatch(/"answered":5/);
  });
});
