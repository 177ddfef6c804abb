import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { difyImportCommand } from '../../../../src/cli/commands/dify-import.js';
import { difyAgentOptionsSchema } from '../../../../src/plugins/dify-agent/agent-options.js';

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
