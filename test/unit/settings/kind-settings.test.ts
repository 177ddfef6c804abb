import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readWorkerSettings } from '../../../src/assembly/worker-settings.js';
import { createLogger } from '../../../src/logging.js';
import { readDifyDaemonSettings } from '../../../src/plugins/dify-daemon/settings.js';
import { readStdioIdentity } from '../../../src/plugins/mcp/stdio-identity.js';
import { PluginRegistry } from '../../../src/plugins/registry.js';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import { envNamePolicy, loadSecrets, WORKER_OWN_ENV } from '../../../src/secrets.js';
import { readSettings, settingSecrets, type Settings } from '../../../src/settings.js';

/** What the core says of a variable: the words after its name. */
function coreRefusal(name: string, value: string): string {
  try {
    readWorkerSettings({ [name]: value });
  } catch (err) {
    const message = (err as Error).message;
    return message.slice(message.indexOf(`${name}: `) + name.length + 2);
  }
  throw new Error(`${name}=${JSON.stringify(value)} was read`);
}

/** What a kind says of one of its variables, read as a worker hands it its settings. */
function kindRefusal(name: string, value: string): string {
  const env = { DIFY_DAEMON_URL: 'http://daemon:5002', DIFY_DAEMON_KEY: 'k', DIFY_TENANT_ID: 't', [name]: value };
  const { problems } = readDifyDaemonSettings(readWorkerSettings(env).pluginSettings, loadSecrets(env));
  expect(problems).toHaveLength(1);
  const prefix = `setting ${name}: `;
  expect(problems[0]!.startsWith(prefix)).toBe(true);
  return problems[0]!.slice(prefix.length);
}

/** The lines a logger masking the settings' secrets writes. */
function logged(settings: Settings, write: (log: ReturnType<typeof createLogger>) => void): string {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  write(createLogger({ level: 'info', destination, secrets: () => settingSecrets(settings) }));
  return lines.join('');
}

describe("whole numbers, the core's settings and the plugin kinds' alike", () => {
  it.each(['1e3', '', '-1', ' 5', '0x10', '2.0'])('refuse %j with the same words, naming the variable', (value) => {
    const core = coreRefusal('TOOLWIRE_TIMEOUT_MS', value);
    expect(core).toBe(`must be a whole number (digits only), got ${JSON.stringify(value)}`);
    expect(kindRefusal('DIFY_DAEMON_MAX_ATTEMPTS', value)).toBe(core);
  });

  it('leave an emptied user id unset, as the image that sets one needs, and refuse a word there too', () => {
    expect(readStdioIdentity({ MCP_STDIO_UID: '', MCP_STDIO_GID: '' }, loadSecrets({}))).toEqual({
      identity: { uid: undefined, gid: undefined, cwd: undefined },
      problems: [],
    });
    expect(readStdioIdentity({ MCP_STDIO_UID: '1e3', MCP_STDIO_GID: '1' }, loadSecrets({})).problems).toEqual([
      `setting MCP_STDIO_UID: ${coreRefusal('TOOLWIRE_TIMEOUT_MS', '1e3')}`,
    ]);
  });

  it("read digits, and a kind's bound in the same words", () => {
    expect(readWorkerSettings({ TOOLWIRE_TIMEOUT_MS: '1000' }).limits.timeoutMs).toBe(1000);
    const env = { DIFY_DAEMON_URL: 'http://daemon:5002', DIFY_DAEMON_KEY: 'k', DIFY_TENANT_ID: 't', DIFY_DAEMON_MAX_ATTEMPTS: '7' };
    expect(readDifyDaemonSettings(readWorkerSettings(env).pluginSettings, loadSecrets(env)).settings.retry.maxAttempts).toBe(7);
    expect(kindRefusal('DIFY_DAEMON_MAX_ATTEMPTS', '0')).toBe('must be a whole number of at least 1, got "0"');
  });

  it('apply a default once: unset, or 0 where 0 would stop all work', () => {
    const unset = readWorkerSettings({});
    expect([unset.limits.concurrency, unset.nonPersistentInFlight, unset.limits.maxRedeliveries]).toEqual([64, 500, 5]);
    const zero = readWorkerSettings({ TOOLWIRE_CONCURRENCY: '0', TOOLWIRE_NON_PERSISTENT_IN_FLIGHT: '0', TOOLWIRE_MAX_REDELIVERIES: '0' });
    expect([zero.limits.concurrency, zero.nonPersistentInFlight, zero.limits.maxRedeliveries]).toEqual([64, 500, 0]);
  });
});

describe("the plugin kinds' settings", () => {
  it("keep every kind's variables among the worker's own, which a descriptor may not name by a pattern", () => {
    // A kind with a new prefix must add it to WORKER_OWN_ENV too: this fails until it does.
    const prefixes = defaultRegistry()
      .declaredSettings()
      .flatMap((d) => d.prefixes);
    expect(prefixes.length).toBeGreaterThan(3);
    const mayName = envNamePolicy({ TOOLWIRE_SECRET_ENV: '*' }, 'directory');
    for (const prefix of prefixes) expect(mayName(`${prefix}SOME_KEY`), `${prefix}* is not in WORKER_OWN_ENV`).toBe(false);
    expect(WORKER_OWN_ENV.length).toBeGreaterThan(0);
    expect(mayName('WEATHER_API_KEY')).toBe(true);
  });

  it('hand the plugins the variables the kinds declare, and nothing else of the environment', () => {
    const { pluginSettings } = readWorkerSettings({
      DIFY_TENANT_ID: 't',
      MCP_STDIO_CWD: '/srv',
      OPENAPI_CA_FILE: '/ca.pem',
      TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS: '1',
      HTTPS_PROXY: 'http://proxy:3128',
      PULSAR_TOKEN: 'broker',
      TOOLWIRE_TIMEOUT_MS: '5',
    });
    expect(pluginSettings).toEqual({
      DIFY_TENANT_ID: 't',
      MCP_STDIO_CWD: '/srv',
      OPENAPI_CA_FILE: '/ca.pem',
      TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS: '1',
      HTTPS_PROXY: 'http://proxy:3128',
    });
  });

  it("mask the values of a kind's secret settings in the logs, and leave its other settings readable", () => {
    const settings = readWorkerSettings({
      DIFY_DAEMON_KEY: 'daemon-key-value',
      DIFY_AGENT_MODEL_KEY: 'model-key-value',
      DIFY_TENANT_ID: 'tenant-visible',
    });
    const out = logged(settings, (log) => log.info({ tenant: 'tenant-visible' }, 'daemon-key-value then model-key-value'));
    expect(out).not.toContain('daemon-key-value');
    expect(out).not.toContain('model-key-value');
    expect(out).toContain('[redacted] then [redacted]');
    expect(out).toContain('tenant-visible');
  });

  it('read a new kind by its declaration alone: its prefix reaches the plugins and its secret is masked', () => {
    const registry = new PluginRegistry().registerKind({
      kind: 'weather',
      serviceOptions: z.object({}),
      settings: { prefixes: ['WEATHER_'], secrets: ['WEATHER_API_KEY'] },
      load: async () => {
        throw new Error('not loaded: settings need no code');
      },
    });
    const env = { WEATHER_API_KEY: 'weather-secret', WEATHER_UNITS: 'metric', DIFY_DAEMON_KEY: 'not-a-kind-here' };
    const settings = readSettings(env, {}, registry.declaredSettings());
    expect(settings.pluginSettings).toEqual({ WEATHER_API_KEY: 'weather-secret', WEATHER_UNITS: 'metric' });
    expect(settingSecrets(settings)).toEqual(['weather-secret']);
    expect(logged(settings, (log) => log.info('key weather-secret'))).not.toContain('weather-secret');
  });
});
