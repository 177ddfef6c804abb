import { describe, expect, it } from 'vitest';
import { readDifyAgentSettings } from '../../../../src/plugins/dify-agent/settings.js';
import { loadSecrets } from '../../../../src/secrets.js';

const base = {
  DIFY_AGENT_DAEMON_URL: 'http://127.0.0.1:5002',
  DIFY_AGENT_DAEMON_KEY: 'k',
  DIFY_AGENT_TENANT_ID: 't',
  DIFY_INNER_API_KEY: 'env:INNER',
  DIFY_AGENT_MODEL_URL: 'http://127.0.0.1:11434/v1/',
};

describe('dify-agent settings', () => {
  it('reads the daemon, the inner API (loopback by default) and the model endpoint, keys by reference', () => {
    const { settings, problems } = readDifyAgentSettings(base, loadSecrets({ INNER: 'inner-secret' }));
    expect(problems).toEqual([]);
    expect(settings.innerApi).toEqual({ host: '127.0.0.1', port: 5001, key: 'inner-secret' });
    expect(settings.model).toEqual({ baseUrl: 'http://127.0.0.1:11434/v1', key: undefined });
    expect(settings.daemon).toEqual({ url: 'http://127.0.0.1:5002', key: 'k', tenantId: 't' });
  });

  it("refuses slim's local mode with the reason", () => {
    const { problems } = readDifyAgentSettings({ ...base, DIFY_AGENT_RUNTIME: 'slim', DIFY_SLIM_MODE: 'local' }, loadSecrets({ INNER: 'x' }));
    expect(problems.join('\n')).toMatch(/slim's local mode cannot run an agent strategy: it handles only the plugin's stream, end and error session messages and closes the plugin's stdin/);
  });

  it('names every missing setting', () => {
    const { problems } = readDifyAgentSettings({}, loadSecrets({}));
    for (const k of ['DIFY_AGENT_DAEMON_URL', 'DIFY_AGENT_DAEMON_KEY', 'DIFY_AGENT_TENANT_ID', 'DIFY_INNER_API_KEY', 'DIFY_AGENT_MODEL_URL']) expect(problems.join('\n')).toContain(k);
  });
});
