import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { difyImportCommand } from '../../../../src/cli/commands/dify-import.js';
import { difyAgentOptionsSchema } from '../../../../src/plugins/dify-agent/agent-options.js';
import { runCli } from '../../../support/cli.js';

const PLUGIN = join(dirname(fileURLToPath(import.meta.url)), '../../../interop/dify-agent/plugin');

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Sink();
  const stderr = new Sink();
  const code = await difyImportCommand.run({ argv, stdin: Readable.from([]), stdout, stderr, env: {}, signal: new AbortController().signal });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('toolwire dify import of agent-strategy plugins', () => {
  it('learns a strategy from the manifest: plugin id, provider, strategy, the agent-facing arguments', async () => {
    const r = await run([join(PLUGIN, 'manifest.yaml'), '--service', 'research', '--strategy', 'react', '--name', 'research']);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(d).toMatchObject({
      type: 'tool-service',
      name: 'research',
      service: 'research',
      arguments: [
        { name: 'query', type: 'string', required: true },
        { name: 'context', type: 'string' },
      ],
      'plugin-options': {
        plugin_id: 'toolwire/test_agent',
        provider: 'toolwire/test_agent/agent',
        strategy: 'react',
        maximum_iterations: 3,
        agent_may_set: ['context'],
        tools: [],
      },
    });
    expect(difyAgentOptionsSchema.safeParse(d['plugin-options']).success).toBe(true);
    expect(r.stderr).toContain('"plugin-options".tools');
  });

  it('learns one strategy file next to its manifest, and asks which strategy when the manifest has several', async () => {
    const one = await run([join(PLUGIN, 'strategies/function_calling.yaml'), '--service', 'research', '--provider', 'toolwire/test_agent/agent']);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({
      name: 'function_calling',
      'plugin-options': { plugin_id: 'toolwire/test_agent', strategy: 'function_calling' },
    });
    const which = await run([join(PLUGIN, 'manifest.yaml'), '--service', 'research']);
    expect(which.code).toBe(2);
    expect(which.stderr).toContain('give --strategy; the plugin has: function_calling, react');
  });
});

describe('toolwire dify import of several strategies into one service', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('gives the service a "strategy" config param and each tool its value, so that the service validates as imported', async () => {
    dir = await mkdtemp(join(tmpdir(), 'strategies-'));
    const r = await run([join(PLUGIN, 'manifest.yaml'), '--service', 'research', '--strategy', 'function_calling,react', '--out', dir]);
    expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('2 tool(s) of 2 written')]);
    const service = JSON.parse(await readFile(join(dir, 'tool-service', 'research.json'), 'utf8')) as Record<string, unknown>;
    expect(service).toMatchObject({
      id: 'research',
      'config-params': [{ name: 'strategy', required: true }],
      plugin: { kind: 'dify-agent', plugin_id: 'toolwire/test_agent', provider: 'toolwire/test_agent/agent' },
    });
    for (const name of ['function_calling', 'react']) {
      const tool = JSON.parse(await readFile(join(dir, 'tool', `${name}.json`), 'utf8')) as Record<string, unknown>;
      expect(tool).toMatchObject({ name, service: 'research', strategy: name, 'plugin-options': { strategy: name } });
    }
    const validated = await runCli(['validate', '--static', dir]);
    expect([validated.code, validated.stderr]).toEqual([0, '']);
  });

  it('prints the service and its tools as one document without --out, and refuses one --name for several tools', async () => {
    const r = await run([join(PLUGIN, 'manifest.yaml'), '--service', 'research', '--strategy', 'react,function_calling']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { 'tool-service': Record<string, unknown>; tools: Record<string, unknown>[] };
    expect(doc['tool-service']['config-params']).toEqual([{ name: 'strategy', required: true }]);
    expect(doc.tools.map((tool) => [tool['name'], tool['strategy']])).toEqual([
      ['react', 'react'],
      ['function_calling', 'function_calling'],
    ]);
    const named = await run([join(PLUGIN, 'manifest.yaml'), '--service', 'research', '--strategy', 'react,function_calling', '--name', 'agent']);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain('--name names one tool');
  });

  it('fills the provider of a strategy file from the provider YAML that lists it', async () => {
    const r = await run([join(PLUGIN, 'strategies/react.yaml'), '--service', 'research']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      name: 'react',
      strategy: 'react',
      'plugin-options': { plugin_id: 'toolwire/test_agent', provider: 'toolwire/test_agent/agent', strategy: 'react' },
    });
    expect(r.stderr).not.toContain('--provider');
  });

  it('refuses a dify-agent descriptor that asks for slim with the reason, not as unknown keys', async () => {
    dir = await mkdtemp(join(tmpdir(), 'strategies-'));
    await mkdir(join(dir, 'tool-service'));
    await writeFile(
      join(dir, 'tool-service', 'research.json'),
      JSON.stringify({
        id: 'research',
        'request-queue': 'non-persistent://tg/request/research',
        'response-queue': 'non-persistent://tg/response/research',
        plugin: { kind: 'dify-agent', plugin_id: 'toolwire/test_agent', provider: 'agent', strategy: 'react', runtime: 'slim', slim_mode: 'local' },
      }),
    );
    const r = await runCli(['validate', '--static', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`"runtime", "slim_mode": a descriptor cannot ask for slim. slim's local mode cannot run an agent strategy`);
    expect(r.stderr).not.toContain('Unrecognized');
  });
});
