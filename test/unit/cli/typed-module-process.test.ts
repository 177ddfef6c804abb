import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { startRun, type RunProcess } from '../../support/run-process.js';

const ENTRY = resolve('src/index.ts');

/** A typed-tool module as a user writes one; `version` shows which code answered. */
function toolSource(version: string): string {
  return `import { defineTool, z } from ${JSON.stringify(ENTRY)};

export const greet = defineTool({
  name: 'greet',
  description: 'Greets someone',
  arguments: z.object({ name: z.string().min(1).describe('Who to greet') }),
  run: ({ name }) => \`${version}: hello \${name}\`,
});

export const slow = defineTool({
  name: 'slow',
  description: 'Answers after a while',
  arguments: z.object({ ms: z.number() }),
  async run({ ms }, { signal }) {
    await new Promise((r) => setTimeout(r, ms, signal));
    return '${version}: slow';
  },
});

export const boom = defineTool({
  name: 'boom',
  description: 'Fails',
  arguments: z.object({}),
  run() {
    const why: string = 'on purpose';
    throw new Error(why);
  },
});
`;
}
const BOOM_LINE =
  toolSource('x')
    .split('\n')
    .findIndex((l) => l.includes('throw new Error(why)')) + 1;

function start(configDir: string): Promise<RunProcess> {
  return startRun(configDir, { args: ['--watch'], env: { LOG_LEVEL: 'info' } });
}

/** A gateway call: its SSE answer, joined (the response text, or the error). */
async function invoke(base: string, tool: string, args: unknown): Promise<{ response: string; error: string | undefined }> {
  const res = await fetch(`${base}/v1/tools/${tool}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ arguments: args }),
  });
  const text = await res.text();
  if (res.status !== 200) return { response: '', error: text };
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice(6)) as { error: { type: string; message: string } | null; response: string });
  const error = events.find((e) => e.error)?.error;
  return { response: events.map((e) => e.response ?? '').join(''), error: error ? `${error.type}: ${error.message}` : undefined };
}

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a typed TypeScript module under toolwire run --watch (a real process)', () => {
  let dir: string;
  let child: ChildProcess | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'typed-watch-'));
    await mkdir(join(dir, 'tools'));
    // A project of ES modules, as \`toolwire init\` makes one (.ts is then ESM; elsewhere name it .mts).
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
    await writeFile(join(dir, 'tools', 'hello.ts'), toolSource('v1'));
    const r = await runCli(['module', 'import', join(dir, 'tools', 'hello.ts'), '--service', 'hello', '--out', join(dir, 'config')]);
    expect(r.code).toBe(0);
  });
  afterEach(async () => {
    child?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the .ts as it is, maps a stack to its line, and swaps in saved changes while calls in flight finish', async () => {
    const run = await start(join(dir, 'config'));
    child = run.child;
    expect(await invoke(run.base, 'greet', { name: 'Ada' })).toEqual({ response: 'v1: hello Ada', error: undefined });

    // A failing tool's stack names the .ts file and line (source maps), not tsx's output.
    await invoke(run.base, 'boom', {});
    await until('a stack naming hello.ts', () => run.stderr().includes(`hello.ts:${BOOM_LINE}:`));

    // A schema the call fails is an invalid-arguments answer that says what to fix.
    expect((await invoke(run.base, 'greet', { name: '' })).error).toMatch(
      /^invalid-arguments: invalid arguments for greet: name: Too small: expected string to have >=1 characters$/,
    );

    // A call in flight when the file is saved finishes on the code it started on.
    const inFlight = invoke(run.base, 'slow', { ms: 1500 });
    await until(
      'the slow call running',
      async () => (await (await fetch(`${run.base}/metrics`)).text()).match(/toolwire_requests_in_flight\{service="hello"\} 1/) !== null,
    );
    await writeFile(join(dir, 'tools', 'hello.ts'), toolSource('v2'));
    await until('the change applied', () => run.stderr().includes('config change applied'));
    expect(await invoke(run.base, 'greet', { name: 'Ada' })).toEqual({ response: 'v2: hello Ada', error: undefined });
    expect(await inFlight).toEqual({ response: 'v1: slow', error: undefined });

    // A syntax error is refused, saying where, and the last good code keeps serving.
    await writeFile(join(dir, 'tools', 'hello.ts'), `${toolSource('v3')}\nexport const oops = ;\n`);
    await until('the broken change refused', () => /hello\.ts:\d+:\d+: ERROR: Unexpected.*refused/.test(run.stderr())).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}; the log ends:\n${run.stderr().slice(-3000)}`);
    });
    expect(await invoke(run.base, 'greet', { name: 'Ada' })).toEqual({ response: 'v2: hello Ada', error: undefined });
  }, 90_000);
});
