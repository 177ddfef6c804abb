import { difyDaemonPluginFactory } from '../../../../src/plugins/dify-daemon/dify-daemon-plugin.js';
import type { PluginFactory } from '../../../../src/plugins/plugin.js';
import type { FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { harness, type Harness } from '../dify-common/harness.js';

export const CREDENTIAL = 'sk-live-credential-5f3e9a7c1b';

export const webSearch = {
  name: 'web-search',
  description: 'Search the web',
  arguments: [
    { name: 'query', type: 'string', required: true, llm_description: 'what to look for' },
    { name: 'limit', type: 'number', default: 3 },
    { name: 'region', type: 'select', form: 'form', required: true, options: ['eu', 'us'] },
  ],
  'runtime-parameters': { region: 'eu' },
  'plugin-options': { provider: 'langgenius/search/search', tool: 'web_search', credentials: { api_key: 'env:SEARCH_KEY' } },
};

export function settingsFor(daemon: FakeDifyDaemon, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DIFY_DAEMON_URL: daemon.url,
    DIFY_DAEMON_KEY: daemon.key,
    DIFY_TENANT_ID: daemon.tenant,
    DIFY_DAEMON_RETRY_BASE_MS: '1',
    DIFY_DAEMON_RETRY_MAX_MS: '5',
    ...extra,
  };
}

export function daemonHarness(
  daemon: FakeDifyDaemon,
  o: { settings?: Record<string, string>; tools?: Record<string, unknown>[]; servicePlugin?: Record<string, unknown> } = {},
): Promise<Harness> {
  return harness({
    factory: difyDaemonPluginFactory as unknown as PluginFactory<never, never>,
    kind: 'dify-daemon',
    settings: settingsFor(daemon, o.settings),
    env: { SEARCH_KEY: CREDENTIAL },
    servicePlugin: o.servicePlugin,
    tools: o.tools ?? [webSearch],
  });
}
