import { describe, expect, it } from 'vitest';
import { readSettings } from '../../../src/settings.js';

describe('numeric settings', () => {
  it('read digits, and off for the HTTP port', () => {
    expect(readSettings({ TOOLWIRE_HTTP_PORT: '8080', TOOLWIRE_TIMEOUT_MS: '500' })).toMatchObject({ httpPort: 8080, limits: { timeoutMs: 500 } });
    expect(readSettings({ TOOLWIRE_HTTP_PORT: 'off' }).httpPort).toBeUndefined();
    expect(readSettings({ TOOLWIRE_HTTP_PORT: '0' }).httpPort).toBe(0);
    expect([readSettings({}).limits.answeredMemory, readSettings({ TOOLWIRE_ANSWERED_MEMORY: '1000000' }).limits.answeredMemory]).toEqual([10_000, 1_000_000]);
  });

  it.each([
    ['TOOLWIRE_HTTP_PORT', '', /TOOLWIRE_HTTP_PORT: must be a port number \(0-65535\) or off/],
    ['TOOLWIRE_HTTP_PORT', '70000', /TOOLWIRE_HTTP_PORT/],
    ['TOOLWIRE_HTTP_PORT', ' 80', /TOOLWIRE_HTTP_PORT/],
    ['TOOLWIRE_TIMEOUT_MS', '', /TOOLWIRE_TIMEOUT_MS: must be a whole number/],
    ['TOOLWIRE_CONCURRENCY', '1.5', /TOOLWIRE_CONCURRENCY: must be a whole number/],
    ['TOOLWIRE_CONFIG_POLL_MS', '-1', /TOOLWIRE_CONFIG_POLL_MS: must be a whole number/],
    ['TOOLWIRE_ANSWERED_MEMORY', '1000001', /TOOLWIRE_ANSWERED_MEMORY/],
  ])('refuse %s=%j instead of reading it as a number', (name, value, message) => {
    expect(() => readSettings({ [name]: value })).toThrow(message);
  });
});

describe('HTTP caller settings', () => {
  it('read allowed hosts and origins as lists, and the mcp serve session bounds', () => {
    expect(
      readSettings({
        TOOLWIRE_HTTP_ALLOWED_HOSTS: ' tools.example.com, worker.svc ,',
        TOOLWIRE_HTTP_ALLOWED_ORIGINS: 'https://ui.example.com,http://127.0.0.1:3000',
        TOOLWIRE_MCP_MAX_SESSIONS: '10',
        TOOLWIRE_MCP_MAX_SESSIONS_PER_CLIENT: '3',
      }),
    ).toMatchObject({
      httpAllowedHosts: ['tools.example.com', 'worker.svc'],
      httpAllowedOrigins: ['https://ui.example.com', 'http://127.0.0.1:3000'],
      mcpMaxSessions: 10,
      mcpMaxSessionsPerClient: 3,
      mcpSessionIdleMs: 900_000,
    });
    expect(readSettings({})).toMatchObject({ httpAllowedHosts: [], httpAllowedOrigins: [], mcpMaxSessions: 1000, mcpMaxSessionsPerClient: 100 });
  });

  it.each(['ui.example.com', 'https://ui.example.com/app', 'https://user@ui.example.com', '*'])('refuse the origin %j', (origin) => {
    expect(() => readSettings({ TOOLWIRE_HTTP_ALLOWED_ORIGINS: origin })).toThrow(/TOOLWIRE_HTTP_ALLOWED_ORIGINS: must be origins/);
  });
});
