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
    const { settings, problems } = readDifyAgentSettings(base, loadSecrets({ INNER: 'inner-secret-0123456789' }));
    expect(problems).toEqual([]);
    expect(settings.innerApi).toEqual({ host: '127.0.0.1', port: 5001, key: 'inner-secret-0123456789' });
    expect(settings.model).toEqual({ kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', key: undefined });
    expect(settings.daemon).toEqual({ url: 'http://127.0.0.1:5002', key: 'k', tenantId: 't' });
  });

  it("refuses slim's local mode with the reason", () => {
    const { problems } = readDifyAgentSettings(
      { ...base, DIFY_AGENT_RUNTIME: 'slim', DIFY_SLIM_MODE: 'local' },
      loadSecrets({ INNER: 'inner-secret-0123456789' }),
    );
    expect(problems.join('\n')).toMatch(
      /slim's local mode cannot run an agent strategy: it handles only the plugin's stream, end and error session messages and closes the plugin's stdin/,
    );
  });

  it("takes TrustGraph's text-completion on the broker as the model, by default the queues of flow default in workspace default", () => {
    const { DIFY_AGENT_MODEL_URL: _, ...withoutUrl } = base;
    const { settings, problems } = readDifyAgentSettings(
      { ...withoutUrl, DIFY_AGENT_MODEL: 'text-completion' },
      loadSecrets({ INNER: 'inner-secret-0123456789' }),
    );
    expect(problems).toEqual([]);
    expect(settings.model).toEqual({
      kind: 'text-completion',
      request: 'non-persistent://tg/request/text-completion:default:default',
      response: 'non-persistent://tg/response/text-completion:default:default',
    });
  });

  it("reads a flow's text-completion queues in TrustGraph's class:topicspace:topic form or as Pulsar names", () => {
    const { settings, problems } = readDifyAgentSettings(
      {
        ...base,
        DIFY_AGENT_MODEL: 'text-completion',
        DIFY_AGENT_TEXT_COMPLETION_REQUEST_QUEUE: 'request:tg:text-completion:research:rag-flow',
        DIFY_AGENT_TEXT_COMPLETION_RESPONSE_QUEUE: 'non-persistent://tg/response/text-completion:research:rag-flow',
      },
      loadSecrets({ INNER: 'inner-secret-0123456789' }),
    );
    expect(problems).toEqual([]);
    expect(settings.model).toMatchObject({
      request: 'non-persistent://tg/request/text-completion:research:rag-flow',
      response: 'non-persistent://tg/response/text-completion:research:rag-flow',
    });
  });

  it('refuses an unknown model kind and a malformed queue', () => {
    expect(readDifyAgentSettings({ ...base, DIFY_AGENT_MODEL: 'anthropic' }, loadSecrets({ INNER: 'inner-secret-0123456789' })).problems).toEqual([
      'setting DIFY_AGENT_MODEL: must be one of openai, text-completion, got "anthropic"',
    ]);
    const { problems } = readDifyAgentSettings(
      { ...base, DIFY_AGENT_MODEL: 'text-completion', DIFY_AGENT_TEXT_COMPLETION_REQUEST_QUEUE: 'text-completion' },
      loadSecrets({ INNER: 'inner-secret-0123456789' }),
    );
    expect(problems.join()).toMatch(/^setting DIFY_AGENT_TEXT_COMPLETION_REQUEST_QUEUE: malformed topic "text-completion"/);
  });

  it('names every missing setting', () => {
    const { problems } = readDifyAgentSettings({}, loadSecrets({}));
    for (const k of ['DIFY_AGENT_DAEMON_URL', 'DIFY_AGENT_DAEMON_KEY', 'DIFY_AGENT_TENANT_ID', 'DIFY_INNER_API_KEY', 'DIFY_AGENT_MODEL_URL'])
      expect(problems.join('\n')).toContain(k);
  });
});
