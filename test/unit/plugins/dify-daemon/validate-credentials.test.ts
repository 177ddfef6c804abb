import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { difyDaemonPluginFactory } from '../../../../src/plugins/dify-daemon/dify-daemon-plugin.js';
import type { PluginFactory } from '../../../../src/plugins/plugin.js';
import { goJson } from '../../../fakes/dify-wire.js';
import { startFakeDifyDaemon, type FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { loadCatalog } from '../dify-common/harness.js';
import { asServed, asTools } from '../../../support/harness.js';
import { CREDENTIAL, settingsFor, webSearch } from './setup.js';

// The daemon's tool/validate_credentials (its route, request and {result} answer as in
// langgenius/dify-plugin-daemon: internal/server/controllers/definitions/definitions.go,
// pkg/entities/requests/tool.go, pkg/entities/tool_entities/validate.go).
describe('dify-daemon: checking credentials before the first call (validate --check-credentials)', () => {
  let daemon: FakeDifyDaemon;
  beforeEach(async () => {
    daemon = await startFakeDifyDaemon({ plugins: ['langgenius/search'] });
    daemon.script('tool/validate_credentials:', async (c) => {
      const creds = (c.body['data'] as { credentials: Record<string, string> }).credentials;
      await c.event(goJson({ code: 0, message: 'success', data: { result: creds['api_key'] === CREDENTIAL } }));
    });
  });
  afterEach(() => daemon.close());

  async function check(env: Record<string, string>): Promise<string[]> {
    const { catalog, ctx } = await loadCatalog({
      factory: difyDaemonPluginFactory as unknown as PluginFactory<never, never>,
      kind: 'dify-daemon',
      settings: settingsFor(daemon),
      env,
      tools: [webSearch, { ...webSearch, name: 'web-search-2' }],
    });
    const service = [...catalog.services.values()][0]!;
    const tools = [...catalog.tools.values()];
    return difyDaemonPluginFactory.checkCredentials!(asServed(service), asTools(tools), ctx, AbortSignal.timeout(10_000));
  }

  it('passes good credentials, asking once per provider, with the provider and the resolved values', async () => {
    expect(await check({ SEARCH_KEY: CREDENTIAL })).toEqual([]);
    const asked = daemon.requests.filter((r) => r.path.endsWith('/tool/validate_credentials'));
    expect(asked).toHaveLength(1);
    expect(asked[0]?.headers['x-plugin-id']).toBe('langgenius/search');
    expect(JSON.parse(asked[0]?.body ?? '{}')).toMatchObject({ data: { provider: 'search', credentials: { api_key: CREDENTIAL } } });
  });

  it('reports credentials the plugin refuses, naming the descriptor and never the value', async () => {
    const problems = await check({ SEARCH_KEY: 'sk-wrong-0000' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/provider search of langgenius\/search: the plugin refused the credentials/);
    expect(problems[0]).not.toContain('sk-wrong-0000');
  });
});
