import { describe, expect, it } from 'vitest';
import { readWorkerSettings } from '../../../../src/assembly/worker-settings.js';
import { DiscardingBlobSink } from '../../../../src/plugins/blob-sink.js';
import { observe, reportDifyError } from '../../../../src/plugins/dify-common/observe-stream.js';
import { parsePluginJson } from '../../../../src/plugins/dify-common/plugin-json.js';
import { readDifySlimSettings } from '../../../../src/plugins/dify-slim/settings.js';
import { slimItems } from '../../../../src/plugins/dify-slim/slim-items.js';
import type { SlimOutput } from '../../../../src/plugins/dify-slim/slim-process.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { captureLogger } from '../../../support/harness.js';

// What the real slim binary does, as the Dify fidelity issue reports it (a run of slim built
// from langgenius/dify-plugin-daemon at bdb5642a, local mode, dify_plugin 0.7.4).

async function* outputs(...lines: unknown[]): AsyncGenerator<SlimOutput> {
  for (const value of lines) yield { kind: 'line', value };
  yield { kind: 'exit', code: 0, signal: null, stderr: '' };
}

describe('dify-slim as the real binary behaves', () => {
  it('hands slim the TLS and proxy variables uv needs, and the names DIFY_SLIM_ENV lists, nothing else', () => {
    const env = {
      DIFY_SLIM_PATH: '/bin/slim',
      DIFY_SLIM_MODE: 'local',
      DIFY_SLIM_FOLDER: '/tmp/plugins',
      PATH: '/usr/bin',
      SSL_CERT_FILE: '/etc/ssl/ca.pem',
      HTTPS_PROXY: 'http://proxy:3128',
      UV_INDEX_URL: 'https://mirror/simple',
      DIFY_SLIM_ENV: 'UV_INDEX_URL',
      PULSAR_TOKEN: 'never',
      SOMETHING_ELSE: 'never',
    };
    const { settings, problems } = readDifySlimSettings(readWorkerSettings(env).pluginSettings, loadSecrets(env));
    expect(problems).toEqual([]);
    expect(settings.env).toMatchObject({
      PATH: '/usr/bin',
      SSL_CERT_FILE: '/etc/ssl/ca.pem',
      HTTPS_PROXY: 'http://proxy:3128',
      UV_INDEX_URL: 'https://mirror/simple',
    });
    expect(Object.keys(settings.env)).not.toContain('PULSAR_TOKEN');
    expect(Object.keys(settings.env)).not.toContain('SOMETHING_ELSE');
  });

  it("keeps installer noise out of the agent's text: the first line, bounded; the whole in the log", async () => {
    const { log, lines } = captureLogger();
    const trace = `init python env: failed to install dependencies\n${'TRACE uv::resolver something happened\n'.repeat(60)}`;
    const items = [];
    for await (const item of slimItems(outputs({ event: 'error', data: { code: 'PLUGIN_INIT_ERROR', message: trace } }), 'local', log, [])) items.push(item);
    const error = items[0] as { kind: 'error'; error: { message: string } };
    expect(error.error.message).toBe("init python env: failed to install dependencies (the full output is in the worker's log)");
    expect(lines().some((l) => l.includes('slim error, in full') && l.includes('TRACE uv::resolver'))).toBe(true);
  });

  it("an exit 0 without done (slim's inactivity timer) is an unfinished answer, not an empty success", async () => {
    const { log } = captureLogger();
    const run = async () => {
      for await (const _ of slimItems(outputs({ event: 'message', data: { stage: 'run' } }), 'local', log, [])) void _;
    };
    await expect(run()).rejects.toThrow(/stopped without finishing its answer/);
  });

  it("logs a slim error event as a tool failure, not as the daemon's unknown route", () => {
    const { log, lines } = captureLogger();
    reportDifyError(
      {
        errorType: 'PluginExecError',
        message: 'boom',
        chain: ['PluginExecError'],
        traceback: undefined,
        code: 'PLUGIN_EXEC_ERROR',
        httpStatus: undefined,
      },
      { log, toolName: 't', secrets: [] },
    );
    expect(lines().some((l) => l.includes('does not know the route'))).toBe(false);
    expect(lines().some((l) => l.includes('dify tool failed'))).toBe(true);
  });
});

describe('numbers a double cannot hold', () => {
  it('reach the observation as the plugin wrote them, on the slim path (the daemon path parses the same way)', async () => {
    const { log } = captureLogger();
    // A local-mode chunk line exactly as slim writes it: the plugin's JSON message, compacted.
    const line =
      '{"event":"chunk","data":{"type":"json","message":{"json_object":{"big":12345678901234567891,"exact":0.10000000000000000555,"small":42}},"meta":null}}';
    async function* fromSlim(): AsyncGenerator<SlimOutput> {
      yield { kind: 'line', value: parsePluginJson(line) };
      yield { kind: 'line', value: { event: 'done', data: {} } };
      yield { kind: 'exit', code: 0, signal: null, stderr: '' };
    }
    let text = '';
    for await (const chunk of observe(slimItems(fromSlim(), 'local', log, []), {
      log,
      blobSink: new DiscardingBlobSink(),
      signal: new AbortController().signal,
      toolName: 't',
      secrets: [],
    }))
      text += chunk;
    expect(text).toBe('{"big": 12345678901234567891, "exact": 0.10000000000000000555, "small": 42}');
  });
});
