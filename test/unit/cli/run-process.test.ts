import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** `toolwire run` as a real process (the built CLI), reached over its HTTP gateway. */
function start(configDir: string): Promise<{ child: ChildProcess; base: string; stderr: () => string }> {
  const child = spawn(process.execPath, ['bin/toolwire.js', 'run', '--config-dir', configDir, '--http-port', '0', '--log-format', 'json'], {
    env: { ...process.env, PULSAR_URL: '', PULSAR_ADMIN_URL: '', TOOLWIRE_TRANSPORT: 'memory', TOOLWIRE_SHUTDOWN_GRACE_MS: '5000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"http":"(http:\/\/[^"]+)"/.exec(err);
      if (m) resolve({ child, base: m[1]!, stderr: () => err });
    });
    child.once('exit', (code) => reject(new Error(`toolwire run exited (${code}) before serving:\n${err}`)));
  });
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
  const res = await fetch(`${base}/v1/tools/${tool}/invoke`, { method: 'POST', body: JSON.stringify({ arguments: args }) });
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice(6)) as { error: unknown; response: string; end_of_stream: boolean });
}

describe('toolwire run (a real process)', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-run-'));
    await cp('config', dir, { recursive: true });
    await writeFile(join(dir, 'slow.mjs'), 'export default async ({ arguments: a }) => { await new Promise((r) => setTimeout(r, 700)); return `slow ${a.n}`; };\n');
    await writeFile(
      join(dir, 'tool-service', 'slow-service.json'),
      JSON.stringify({ id: 'slow-service', 'request-queue': 'persistent://tg/flow/slow', 'response-queue': 'non-persistent://tg/response/slow', plugin: { kind: 'module', module: './slow.mjs' } }),
    );
    await writeFile(join(dir, 'tool', 'slow.json'), JSON.stringify({ name: 'slow', service: 'slow-service', arguments: [{ name: 'n', type: 'number' }] }));
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
    for (;;) {
      const metrics = await (await fetch(`${run.base}/metrics`)).text();
      if (/^toolwire_requests_in_flight\{service="[^"]+"\} 5$/m.test(metrics)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', resolve));
    run.child.kill('SIGTERM');
    const answers = await Promise.all(calls);
    answers.forEach((events, n) => expect(events).toEqual([{ error: null, response: `slow ${n}`, end_of_stream: true }]));
    expect(await exited).toBe(0);
    expect(run.stderr()).toMatch(/"answered":5/);
  });
});
