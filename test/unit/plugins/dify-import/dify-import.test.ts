import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { difyImportCommand } from '../../../../src/cli/commands/dify-import.js';
import { difyDaemonPluginFactory } from '../../../../src/plugins/dify-daemon/dify-daemon-plugin.js';
import type { PluginFactory } from '../../../../src/plugins/plugin.js';
import { startFakeDifyDaemon, type FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { goJson } from '../../../fakes/dify-wire.js';
import { loadCatalog } from '../dify-common/harness.js';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'fixtures/web_search.yaml');

class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Sink();
  const stderr = new Sink();
  const code = await difyImportCommand.run({ argv, stdin: Readable.from([]), stdout, stderr, env, signal: new AbortController().signal });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('toolwire dify import', () => {
  let daemon: FakeDifyDaemon | undefined;
  afterEach(async () => {
    await daemon?.close();
    daemon = undefined;
  });

  it('builds a descriptor with declarations, the model-facing schema and plugin options from a tool YAML', async () => {
    const r = await run([
      FIXTURE,
      '--service',
      'dify',
      '--name',
      'web-search',
      '--provider',
      'example/search/search',
      '--credential',
      'api_key=env:SEARCH_KEY',
      '--config',
      'tool-id=web',
    ]);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(d).toMatchObject({
      type: 'tool-service',
      name: 'web-search',
      description: 'Searches the web and returns the top results for a query.',
      service: 'dify',
      'tool-id': 'web',
      'plugin-options': { provider: 'example/search/search', tool: 'web_search', credentials: { api_key: 'env:SEARCH_KEY' } },
    });
    expect(d['arguments']).toEqual([
      { name: 'query', type: 'string', form: 'llm', required: true, description: 'the words to search for' },
      { name: 'count', type: 'number', form: 'llm', required: false, description: 'How many results', default: 5, min: 1, max: 20 },
      { name: 'safe', type: 'select', form: 'form', required: true, description: 'Filter level', options: ['strict', 'off'] },
      { name: 'engine', type: 'dynamic-select', form: 'form', required: true, description: 'Engine' },
      { name: 'attachment', type: 'file', form: 'llm', required: false, description: 'Attachment' },
    ]);
    expect(d['input-schema']).toEqual({
      type: 'object',
      properties: {
        query: { type: 'string', description: 'the words to search for' },
        count: { type: 'number', minimum: 1, maximum: 20, description: 'How many results' },
      },
      required: ['query'],
    });
    expect(r.stderr).toBe('note: give "runtime-parameters" values for: safe, engine (required, filled by configuration, no default)\n');
  });

  it('prints a descriptor the catalog loads once runtime parameters are given', async () => {
    const r = await run([FIXTURE, '--service', 'dify', '--name', 'web-search', '--provider', 'example/search/search', '--config', 'tool-id=web']);
    const d = { ...(JSON.parse(r.stdout) as Record<string, unknown>), 'runtime-parameters': { safe: 'strict', engine: 'bing' } };
    const { catalog } = await loadCatalog({
      factory: difyDaemonPluginFactory as unknown as PluginFactory<never, never>,
      kind: 'dify-daemon',
      settings: { DIFY_DAEMON_URL: 'http://127.0.0.1:1', DIFY_DAEMON_KEY: 'k', DIFY_TENANT_ID: 't' },
      tools: [d],
    });
    expect(catalog.tools.get('web-search')?.parameters.map((p) => p.name)).toEqual(['query', 'count', 'safe', 'engine', 'attachment']);
  });

  it('reads the parameters from the daemon with --from-daemon', async () => {
    daemon = await startFakeDifyDaemon({ plugins: ['example/search'] });
    daemon.script('tool/get_runtime_parameters:lookup', async (c) => {
      await c.event(
        goJson({
          code: 0,
          message: 'success',
          data: {
            parameters: [
              {
                name: 'q',
                type: 'string',
                form: 'llm',
                required: true,
                llm_description: 'query',
                label: { en_US: 'Q' },
                human_description: { en_US: 'q' },
                default: null,
                min: null,
                max: null,
                options: [],
              },
            ],
          },
        }),
      );
    });
    const r = await run(
      [
        '--from-daemon',
        '--service',
        'dify',
        '--provider',
        'example/search/search',
        '--tool',
        'lookup',
        '--credential',
        'api_key=env:K',
        '--description',
        'Look things up',
      ],
      {
        DIFY_DAEMON_URL: daemon.url,
        DIFY_DAEMON_KEY: daemon.key,
        DIFY_TENANT_ID: daemon.tenant,
        K: 'cred-value-123',
      },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(d['arguments']).toEqual([{ name: 'q', type: 'string', form: 'llm', required: true, description: 'query' }]);
    expect(d['description']).toBe('Look things up');
    const req = daemon.requests[0];
    expect(req?.path).toBe(`/plugin/${daemon.tenant}/dispatch/tool/get_runtime_parameters`);
    expect(JSON.parse(req?.body ?? '{}')).toEqual({
      user_id: 'toolwire-import',
      conversation_id: null,
      app_id: null,
      message_id: null,
      data: { provider: 'search', tool: 'lookup', credentials: { api_key: 'cred-value-123' } },
    });
  });

  it('explains bad usage with exit code 2', async () => {
    const r = await run([FIXTURE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--service is required');
    expect((await run(['--bogus'])).code).toBe(2);
    const literal = await run([FIXTURE, '--service', 's', '--credential', 'api_key=sk-literal']);
    expect(literal.code).toBe(2);
    expect(literal.stderr).toContain('never a literal value');
  });

  it('names a parameter of a type it does not know, with exit code 1', async () => {
    const yaml = join(tmpdir(), `bad-type-${process.pid}.yaml`);
    const { writeFile, rm } = await import('node:fs/promises');
    await writeFile(yaml, 'identity: {name: t}\nparameters:\n  - {name: p, type: colour, form: llm}\n');
    try {
      const r = await run([yaml, '--service', 's']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('parameters[0] (p): unknown parameter type "colour"');
    } finally {
      await rm(yaml, { force: true });
    }
  });

  it('prints its help', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('toolwire dify import <tool.yaml> --service <id>');
  });
});
