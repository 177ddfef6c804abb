import { describe, expect, it } from 'vitest';
import { readSettings } from '../../../src/settings.js';

describe('numeric settings', () => {
  it('read digits, and off for the HTTP port', () => {
    expect(readSettings({ TOOLWIRE_HTTP_PORT: '8080', TOOLWIRE_TIMEOUT_MS: '500' })).toMatchObject({ httpPort: 8080, limits: { timeoutMs: 500 } });
    expect(readSettings({ TOOLWIRE_HTTP_PORT: 'off' }).httpPort).toBeUndefined();
    expect(readSettings({ TOOLWIRE_HTTP_PORT: '0' }).httpPort).toBe(0);
  });

  it.each([
    ['TOOLWIRE_HTTP_PORT', '', /TOOLWIRE_HTTP_PORT: must be a port number \(0-65535\) or off/],
    ['TOOLWIRE_HTTP_PORT', '70000', /TOOLWIRE_HTTP_PORT/],
    ['TOOLWIRE_HTTP_PORT', ' 80', /TOOLWIRE_HTTP_PORT/],
    ['TOOLWIRE_TIMEOUT_MS', '', /TOOLWIRE_TIMEOUT_MS: must be a whole number/],
    ['TOOLWIRE_CONCURRENCY', '1.5', /TOOLWIRE_CONCURRENCY: must be a whole number/],
    ['TOOLWIRE_CONFIG_POLL_MS', '-1', /TOOLWIRE_CONFIG_POLL_MS: must be a whole number/],
  ])('refuse %s=%j instead of reading it as a number', (name, value, message) => {
    expect(() => readSettings({ [name]: value })).toThrow(message);
  });
});
