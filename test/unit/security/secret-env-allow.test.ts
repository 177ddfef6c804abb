import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { mcpTransport } from '../../../src/plugins/mcp/mcp-session.js';
import { loadSecrets } from '../../../src/secrets.js';
import pino from 'pino';

const env = { PULSAR_TOKEN: 'broker-token', TOOLWIRE_HTTP_TOKEN: 'x', DIFY_DAEMON_KEY: 'daemon-key', SERPAPI_API_KEY: 'serp', TOOL_WEATHER_KEY: 'w', GATEWAY_TOKEN: 'gw' };

describe('env: references a descriptor may make', () => {
  it("by default, any variable but the worker's own credentials and settings", () => {
    const s = loadSecrets(env);
    expect(s.resolve('env:SERPAPI_API_KEY')).toBe('serp');
    for (const ref of ['env:PULSAR_TOKEN', 'env:TOOLWIRE_HTTP_TOKEN', 'env:DIFY_DAEMON_KEY']) {
      expect(s.resolve(ref), ref).toBeUndefined();
      expect(s.refused(ref), ref).toBe(true);
    }
    // The broker token was never handed out, so it is not among the values known to be in use.
    expect(s.values()).not.toContain('broker-token');
  });

  it('only the names and prefixes TOOLWIRE_SECRET_ENV lists, when it is set', () => {
    const s = loadSecrets({ ...env, TOOLWIRE_SECRET_ENV: 'TOOL_*, SERPAPI_API_KEY' });
    expect(s.resolve('env:TOOL_WEATHER_KEY')).toBe('w');
    expect(s.resolve('env:SERPAPI_API_KEY')).toBe('serp');
    expect(s.resolve('env:GATEWAY_TOKEN')).toBeUndefined();
    expect(s.refused('env:GATEWAY_TOKEN')).toBe(true);
    // An operator may list one of the worker's own on purpose.
    expect(loadSecrets({ ...env, TOOLWIRE_SECRET_ENV: 'PULSAR_TOKEN' }).resolve('env:PULSAR_TOKEN')).toBe('broker-token');
  });

  it("the worker's own settings resolve whatever the list says", () => {
    const s = loadSecrets({ ...env, TOOLWIRE_SECRET_ENV: 'TOOL_*' });
    expect(s.resolveOwn('env:GATEWAY_TOKEN')).toBe('gw');
  });

  it("a refused reference is named as refused in the plugin's error", () => {
    const secrets = loadSecrets(env);
    const err = (() => {
      try {
        mcpTransport(
          { transport: 'http', url: 'http://127.0.0.1:1/mcp', headers: { authorization: 'env:PULSAR_TOKEN' } } as never,
          { serviceId: 's', configDir: '.', secrets, basics: {}, log: pino({ level: 'silent' }) },
        );
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/env:PULSAR_TOKEN names a variable TOOLWIRE_SECRET_ENV does not allow/);
  });
});
