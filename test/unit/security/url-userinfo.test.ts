/**
 * A URL with a user name or password in it is refused wherever a descriptor or a plugin
 * setting gives one, with a problem that names the field and never repeats the secret.
 */
import { describe, expect, it } from 'vitest';
import { readDifyDaemonSettings } from '../../../src/plugins/dify-daemon/settings.js';
import { readDifySlimSettings } from '../../../src/plugins/dify-slim/settings.js';
import { loadSecrets } from '../../../src/secrets.js';
import { catalogOf, entry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';

const PASSWORD = 'hunter2-in-the-url';

async function problemsOf(plugin: { kind: string; [key: string]: unknown }): Promise<string> {
  const err = await catalogOf([entry('tool-service', 's', service('s', { plugin }))]).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err, 'the descriptor was accepted').toBeInstanceOf(Error);
  return err!.message;
}

describe('credentials in URLs', () => {
  it('refuses an MCP server URL with a user and password, or a user alone, without echoing them', async () => {
    for (const url of [`https://ann:${PASSWORD}@mcp.example/mcp`, `https://${PASSWORD}@mcp.example/mcp`]) {
      const text = await problemsOf({ kind: 'mcp', transport: 'http', url });
      expect(text).toContain('plugin.url: must not hold a user name or password');
      expect(text).not.toContain(PASSWORD);
    }
  });

  it('refuses an OpenAPI server or token endpoint with credentials in it', async () => {
    const server = await problemsOf({ kind: 'openapi', server: `https://ann:${PASSWORD}@api.example/v1` });
    expect(server).toContain('plugin.server: must not hold a user name or password');
    const token = await problemsOf({
      kind: 'openapi',
      server: 'https://api.example/v1',
      auth: { type: 'oauth2-client-credentials', 'token-url': `https://ann:${PASSWORD}@auth.example/token`, 'client-id': 'c', 'client-secret': 'env:X' },
    });
    expect(token).toContain('plugin.auth.token-url: must not hold a user name or password');
    for (const t of [server, token]) expect(t).not.toContain(PASSWORD);
  });

  it('refuses a Dify daemon URL with credentials in it, for dify-daemon and slim alike', () => {
    const url = `http://ann:${PASSWORD}@daemon.example:5002`;
    const daemon = readDifyDaemonSettings({ DIFY_DAEMON_URL: url, DIFY_DAEMON_KEY: 'k', DIFY_TENANT_ID: 't' }, loadSecrets({})).problems;
    const slim = readDifySlimSettings({ DIFY_SLIM_PATH: '/bin/true', DIFY_SLIM_DAEMON_ADDR: url, DIFY_SLIM_DAEMON_KEY: 'k' }, loadSecrets({})).problems;
    expect(daemon).toEqual(['setting DIFY_DAEMON_URL: must not hold a user name or password']);
    expect(slim).toEqual(['setting DIFY_SLIM_DAEMON_ADDR: must not hold a user name or password']);
  });
});
