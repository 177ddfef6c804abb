import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { mcpTransport } from '../../../src/plugins/mcp/mcp-session.js';
import { loadSecrets, unresolvedReason } from '../../../src/secrets.js';
import pino from 'pino';

const env = {
  PULSAR_TOKEN: 'broker-token',
  TOOLWIRE_HTTP_TOKEN: 'x',
  DIFY_DAEMON_KEY: 'daemon-key',
  SERPAPI_API_KEY: 'serp',
  TOOL_WEATHER_KEY: 'w',
  GATEWAY_TOKEN: 'gw',
};

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
        mcpTransport({ transport: 'http', url: 'http://127.0.0.1:1/mcp', headers: { authorization: 'env:PULSAR_TOKEN' } } as never, {
          serviceId: 's',
          configDir: '.',
          secrets,
          basics: {},
          log: pino({ level: 'silent' }),
        });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/env:PULSAR_TOKEN names a variable TOOLWIRE_SECRET_ENV does not allow/);
  });

  it('keeps every variable the worker reads, and the usual cloud credentials, from descriptors by default', () => {
    const own = {
      DIFY_SLIM_DAEMON_KEY: 'slim-key',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer otlp',
      AWS_SECRET_ACCESS_KEY: 'aws',
      AZURE_CLIENT_SECRET: 'azure',
      GOOGLE_APPLICATION_CREDENTIALS: '/var/run/gcp.json',
      MCP_BLOB_DIR: '/blobs',
      HTTPS_PROXY: 'http://user:pw@proxy:3128',
      NODE_OPTIONS: '--max-old-space-size=512',
      KUBECONFIG: '/root/.kube/config',
    };
    const s = loadSecrets({ ...env, ...own });
    for (const name of Object.keys(own)) {
      expect(s.resolve(`env:${name}`), name).toBeUndefined();
      expect(s.refused(`env:${name}`), name).toBe(true);
    }
    expect(s.resolve('env:SERPAPI_API_KEY')).toBe('serp');
  });

  it("keeps what the worker's own settings refer to, and what DIFY_SLIM_ENV hands to slim", () => {
    const s = loadSecrets({ ...env, TOOLWIRE_HTTP_TOKEN: 'env:GATEWAY_TOKEN', DIFY_SLIM_ENV: 'SLIM_EXTRA_CA, PIP_INDEX_TOKEN', PIP_INDEX_TOKEN: 'pip' });
    expect(s.resolve('env:GATEWAY_TOKEN')).toBeUndefined();
    expect(s.resolve('env:PIP_INDEX_TOKEN')).toBeUndefined();
    expect(s.resolveOwn('env:GATEWAY_TOKEN')).toBe('gw');
  });

  it("lets a descriptor name one of the worker's own only when the list names it in full, not by a pattern", () => {
    const all = loadSecrets({ ...env, AWS_SECRET_ACCESS_KEY: 'aws', TOOLWIRE_SECRET_ENV: '*' });
    expect(all.resolve('env:SERPAPI_API_KEY')).toBe('serp');
    expect(all.resolve('env:AWS_SECRET_ACCESS_KEY')).toBeUndefined();
    expect(loadSecrets({ ...env, AWS_SECRET_ACCESS_KEY: 'aws', TOOLWIRE_SECRET_ENV: 'AWS_*' }).resolve('env:AWS_SECRET_ACCESS_KEY')).toBeUndefined();
    expect(loadSecrets({ ...env, AWS_SECRET_ACCESS_KEY: 'aws', TOOLWIRE_SECRET_ENV: 'AWS_SECRET_ACCESS_KEY' }).resolve('env:AWS_SECRET_ACCESS_KEY')).toBe(
      'aws',
    );
  });
});

describe('file: references a descriptor may make', () => {
  let dir: string;
  let file: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-secrets-'));
    file = join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ 'http-token': 'gateway-secret', 'daemon-key': 'daemon-secret', 'weather-key': 'w', 'team-a-key': 'a' }));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("by default, any key but those the worker's own settings name", () => {
    const s = loadSecrets({ TOOLWIRE_HTTP_TOKEN: 'file:http-token', DIFY_DAEMON_KEY: 'file:daemon-key' }, file);
    expect(s.resolve('file:weather-key')).toBe('w');
    for (const ref of ['file:http-token', 'file:daemon-key']) {
      expect(s.resolve(ref), ref).toBeUndefined();
      expect(s.refused(ref), ref).toBe(true);
    }
    expect(s.resolveOwn('file:http-token')).toBe('gateway-secret');
    expect(unresolvedReason('file:http-token', s)).toBe('file:http-token names a key TOOLWIRE_SECRET_FILE_KEYS does not allow descriptors to name');
    expect(unresolvedReason('file:absent', s)).toBe('file:absent does not resolve on this worker');
  });

  it('only the keys TOOLWIRE_SECRET_FILE_KEYS lists, when it is set; the worker’s own by full name only', () => {
    const s = loadSecrets({ TOOLWIRE_HTTP_TOKEN: 'file:http-token', TOOLWIRE_SECRET_FILE_KEYS: 'team-a-*, weather-key, http-*' }, file);
    expect(s.resolve('file:team-a-key')).toBe('a');
    expect(s.resolve('file:weather-key')).toBe('w');
    expect(s.resolve('file:daemon-key')).toBeUndefined();
    expect(s.resolve('file:http-token')).toBeUndefined();
    expect(loadSecrets({ TOOLWIRE_HTTP_TOKEN: 'file:http-token', TOOLWIRE_SECRET_FILE_KEYS: 'http-token' }, file).resolve('file:http-token')).toBe(
      'gateway-secret',
    );
  });
});
