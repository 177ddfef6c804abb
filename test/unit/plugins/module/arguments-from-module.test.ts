/**
 * `"arguments": "from-module"`: a tool descriptor that takes its arguments from its typed
 * tool's zod schema, read when the module loads, so a schema edit under `run --watch` is
 * served like a code edit.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import { ConfigError } from '../../../../src/errors.js';
import { defaultRegistry } from '../../../../src/plugins/default-registry.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { captureLogger, entry } from '../../../support/harness.js';
import { startRun, until } from '../../../support/run-process.js';

const ENTRY = resolve('src/index.ts');

/** A typed tool `greet`; `fields` is its schema's body. */
function greetSource(fields: string, answer: string): string {
  return `import { defineTool, z } from ${JSON.stringify(ENTRY)};

export const greet = defineTool({
  name: 'greet',
  description: 'Greets someone',
  arguments: z.object({ ${fields} }),
  run: (args) => ${answer},
});
`;
}

const queues = { 'request-queue': 'non-persistent://tg/request/hello', 'response-queue': 'non-persistent://tg/response/hello' };
const serviceEntry = (module: string) => entry('tool-service', 'hello', { id: 'hello', ...queues, plugin: { kind: 'module', module } });
const toolEntry = (args: unknown) => entry('tool', 'greet', { type: 'tool-service', name: 'greet', service: 'hello', arguments: args });

describe('a tool descriptor whose arguments are "from-module"', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'from-module-')));
    await mkdir(join(dir, 'tools'));
    await writeFile(join(dir, 'package.json'), '{"type":"module"}\n');
    await writeFile(join(dir, 'tools', 'greet.ts'), greetSource(`name: z.string().describe('Who to greet')`, '`hello ${args.name}`'));
    await writeFile(join(dir, 'tools', 'plain.mjs'), `export default () => 'plain';\n`);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const build = (entries: ReturnType<typeof entry>[]) =>
    buildCatalog(
      entries,
      defaultRegistry(),
      { log: captureLogger('warn').log, configDir: dir, secrets: loadSecrets({}), settings: {} },
      { policy: new ExecPolicy('directory') },
    );
  const problems = (p: Promise<unknown>) =>
    p.then(
      () => [],
      (err: unknown) => (err instanceof ConfigError ? err.problems : Promise.reject(err)),
    );

  it("gets its parameters from the typed tool's schema when the catalog is built", async () => {
    const catalog = await build([serviceEntry('./tools/greet.ts'), toolEntry('from-module')]);
    expect(catalog.tools.get('greet')!.parameters).toEqual([
      expect.objectContaining({ name: 'name', type: 'string', required: true, description: 'Who to greet', form: 'llm' }),
    ]);
  });

  it('is refused for a module that exports a function, and for a service of another kind', async () => {
    expect(await problems(build([serviceEntry('./tools/plain.mjs'), toolEntry('from-module')]))).toEqual([
      expect.stringMatching(/^tool\/greet\.json: arguments: "from-module" needs a typed tool/),
    ]);
    const echo = entry('tool-service', 'hello', { id: 'hello', ...queues });
    expect(await problems(build([echo, toolEntry('from-module')]))).toEqual([
      expect.stringMatching(/^tool\/greet\.json: arguments: "from-module" is for the tools of a module service/),
    ]);
  });

  it('leaves written arguments held to the schema, as before', async () => {
    expect(await problems(build([serviceEntry('./tools/greet.ts'), toolEntry([])]))).toEqual([
      expect.stringMatching(/"name" is in greet's schema but not in the descriptor/),
    ]);
  });

  describe('under toolwire run --watch (a real process)', () => {
    let child: ChildProcess | undefined;
    afterEach(() => {
      child?.kill('SIGKILL');
    });

    it('serves a schema edit on save: the new argument is in the catalog and reaches the tool', async () => {
      await mkdir(join(dir, 'config', 'tool-service'), { recursive: true });
      await mkdir(join(dir, 'config', 'tool'));
      await writeFile(join(dir, 'config', 'tool-service', 'hello.json'), JSON.stringify(serviceEntry('../tools/greet.ts').value));
      await writeFile(join(dir, 'config', 'tool', 'greet.json'), JSON.stringify(toolEntry('from-module').value));
      const run = await startRun(join(dir, 'config'), { args: ['--watch'], env: { LOG_LEVEL: 'info' } });
      child = run.child;
      const argumentNames = async () => {
        const listed = (await (await fetch(`${run.base}/v1/tools`)).json()) as { tools: { name: string; input_schema: { properties: object } }[] };
        return Object.keys(listed.tools.find((tool) => tool.name === 'greet')?.input_schema.properties ?? {});
      };
      expect(await argumentNames()).toEqual(['name']);

      await writeFile(
        join(dir, 'tools', 'greet.ts'),
        greetSource(`name: z.string(), punctuation: z.enum(['!', '?']).describe('How to end')`, '`hello ${args.name}${args.punctuation}`'),
      );
      let names: string[] = [];
      await until('the new argument listed', async () => (names = await argumentNames()).includes('punctuation'), run.stderr, 60_000);
      expect(names).toEqual(['name', 'punctuation']);
      const res = await fetch(`${run.base}/v1/tools/greet/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ arguments: { name: 'Ada', punctuation: '?' } }),
      });
      expect(await res.text()).toContain('hello Ada?');
      expect(run.stderr()).not.toMatch(/regenerate the descriptors/);
    }, 90_000);
  });
});
