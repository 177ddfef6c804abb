import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wireError } from '../../../../src/envelope/response.js';
import { httpError, startFakeDifyDaemon, type FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { daemonErrorText, goJson, log, pluginErrorEnvelope, text, TRACEBACK_SAMPLE } from '../../../fakes/dify-wire.js';
import { CREDENTIAL, daemonHarness } from './setup.js';

describe('dify-daemon: secrets and tracebacks stay out of responses and logs', () => {
  let daemon: FakeDifyDaemon;
  beforeEach(async () => {
    daemon = await startFakeDifyDaemon({ plugins: ['langgenius/search'] });
  });
  afterEach(async () => {
    await daemon.close();
  });

  it('never shows the credential, the daemon key or a traceback to the agent, and logs no secret', async () => {
    const traceback = TRACEBACK_SAMPLE(CREDENTIAL);
    const scenarios = [
      // A plugin error whose message and traceback both quote the credential.
      async (): Promise<string> => pluginErrorEnvelope('ValueError', `upstream refused key ${CREDENTIAL}`, traceback),
      async (): Promise<string> => pluginErrorEnvelope('ToolProviderCredentialValidationError', `invalid api key ${CREDENTIAL}`, traceback),
      // A traceback inside the message itself, and the daemon key echoed back.
      async (): Promise<string> =>
        goJson({
          code: -500,
          data: null,
          message: daemonErrorText('PluginInvokeError', daemonErrorText('RuntimeError', `key ${daemon.key} failed\n${traceback}`)),
        }),
    ];
    const responses: string[] = [];
    let run = 0;
    daemon.script('web_search', async (c) => {
      if (run === scenarios.length) {
        // Keys the logger's redaction paths do not know: only our masking can catch these.
        await c.message(log('auth', 'start', { note: `calling with ${CREDENTIAL}`, deep: { nested: { header: `Bearer ${CREDENTIAL}` } } }));
        await c.message(text('done'));
        return;
      }
      if (run === scenarios.length + 1) return httpError.flat(400, 'ValidationError', `bad header ${daemon.key}`);
      const scenario = scenarios[run];
      run++;
      if (scenario) await c.event(await scenario());
    });
    const h = await daemonHarness(daemon);
    for (let i = 0; i < scenarios.length; i++) {
      const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
      responses.push(JSON.stringify(wireError(err)));
    }
    run = scenarios.length;
    responses.push(await h.call('web-search', { query: 'q' }));
    run = scenarios.length + 1;
    responses.push(JSON.stringify(wireError(await h.call('web-search', { query: 'q' }).catch((e: unknown) => e))));

    expect(responses).toHaveLength(5);
    expect(responses[0]).toContain('tool invoke error: upstream refused key [redacted]');
    for (const r of responses) {
      expect(r).not.toContain(CREDENTIAL);
      expect(r).not.toContain(daemon.key);
      expect(r).not.toContain('Traceback');
      expect(r).not.toContain('tools/search.py');
    }
    const logs = h.logs.text();
    expect(h.logs.lines.length).toBeGreaterThan(5);
    expect(logs).not.toContain(CREDENTIAL);
    expect(logs).not.toContain(daemon.key);
    // The traceback is for people reading the log, with the secret masked.
    expect(logs).toContain('tools/search.py');
  });
});
