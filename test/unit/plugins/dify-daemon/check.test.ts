import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../src/errors.js';
import { difyDaemonPluginFactory } from '../../../../src/plugins/dify-daemon/dify-daemon-plugin.js';
import type { PluginFactory } from '../../../../src/plugins/plugin.js';
import { loadCatalog } from '../dify-common/harness.js';

const factory = difyDaemonPluginFactory as unknown as PluginFactory<never, never>;
const settings = { DIFY_DAEMON_URL: 'http://127.0.0.1:1', DIFY_DAEMON_KEY: 'k'.repeat(16), DIFY_TENANT_ID: 't' };

async function problems(o: {
  settings?: Record<string, string | undefined>;
  tools: Record<string, unknown>[];
  env?: Record<string, string>;
  servicePlugin?: Record<string, unknown>;
}): Promise<readonly string[]> {
  const err = await loadCatalog({
    factory,
    kind: 'dify-daemon',
    settings: o.settings ?? settings,
    env: o.env,
    tools: o.tools,
    servicePlugin: o.servicePlugin,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) return [];
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).problems;
}

describe('dify-daemon: load-time checks', () => {
  it('loads a complete configuration', async () => {
    expect(await problems({ tools: [{ name: 'a', 'plugin-options': { provider: 'o/p/prov', credentials: { k: 'env:K' } } }], env: { K: 'v' } })).toEqual([]);
  });

  it('reports a credential reference that does not resolve, naming the reference and not a value', async () => {
    expect(await problems({ tools: [{ name: 'a', 'plugin-options': { provider: 'o/p/prov', credentials: { api_key: 'env:MISSING_KEY' } } }] })).toEqual([
      'tool/a.json: plugin-options.credentials: cannot resolve api_key (env:MISSING_KEY)',
    ]);
  });

  it('refuses a literal credential value', async () => {
    const p = await problems({ tools: [{ name: 'a', 'plugin-options': { provider: 'o/p/prov', credentials: { api_key: 'sk-literal' } } }] });
    expect(p).toEqual([
      'tool/a.json: plugin-options.credentials.api_key: a credential must be a secret reference (env:NAME or file:key), never a literal value',
    ]);
  });

  it('reports missing settings and a tool that names no plugin', async () => {
    const p = await problems({ settings: { DIFY_DAEMON_URL: 'ftp://x' }, tools: [{ name: 'a', 'plugin-options': { provider: 'prov' } }] });
    expect(p).toEqual([
      'tool-service/dify.json: plugin: setting DIFY_DAEMON_URL: must be an http(s) URL',
      'tool-service/dify.json: plugin: setting DIFY_DAEMON_KEY is not set (needed by the dify-daemon plugin)',
      'tool-service/dify.json: plugin: setting DIFY_TENANT_ID is not set (needed by the dify-daemon plugin)',
      'tool/a.json: plugin-options.plugin_id: missing (give "org/plugin", or provider as "org/plugin/provider")',
    ]);
  });

  it('refuses unknown option keys', async () => {
    const p = await problems({ tools: [{ name: 'a', 'plugin-options': { provider: 'o/p/x', daemon_url: 'http://evil' } }] });
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^tool\/a\.json: plugin-options: Unrecognized key/);
  });

  it('resolves the daemon key setting through the secrets when it is a reference', async () => {
    expect(await problems({ settings: { ...settings, DIFY_DAEMON_KEY: 'env:NOPE' }, tools: [] })).toEqual([
      'tool-service/dify.json: plugin: setting DIFY_DAEMON_KEY: cannot resolve env:NOPE',
    ]);
  });
});
