import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { adminUrlOf, resolveBrokerUrls, serviceUrlOf } from '../../../src/transport/broker-urls.js';

describe('broker URL derivation', () => {
  it('maps the standard ports both ways, keeping host and security', () => {
    expect(resolveBrokerUrls('pulsar://broker:6650', undefined)).toEqual({ serviceUrl: 'pulsar://broker:6650', adminUrl: 'http://broker:8080' });
    expect(resolveBrokerUrls('pulsar://broker', undefined).adminUrl).toBe('http://broker:8080');
    expect(resolveBrokerUrls('pulsar+ssl://broker:6651', undefined).adminUrl).toBe('https://broker:8443');
    expect(resolveBrokerUrls(undefined, 'http://127.0.0.1:8080').serviceUrl).toBe('pulsar://127.0.0.1:6650');
    expect(resolveBrokerUrls(undefined, 'wss://broker:8443').serviceUrl).toBe('pulsar+ssl://broker:6651');
    expect(resolveBrokerUrls('pulsar://[::1]:6650', undefined).adminUrl).toBe('http://[::1]:8080');
  });

  it('keeps both when both are given', () => {
    expect(resolveBrokerUrls('pulsar://a:1', 'http://b:2')).toEqual({ serviceUrl: 'pulsar://a:1', adminUrl: 'http://b:2' });
  });

  it('refuses to guess from a non-standard port, or from nothing', () => {
    expect(() => adminUrlOf('pulsar://broker:16650', undefined)).toThrow(/set adminUrl too/);
    expect(() => serviceUrlOf(undefined, 'https://pulsar.example.com')).toThrow(/set serviceUrl too/);
    expect(() => resolveBrokerUrls(undefined, undefined)).toThrow(ConfigError);
    expect(() => adminUrlOf('http://broker:8080', undefined)).toThrow(/pulsar:\/\//);
  });

  it('needs only the URL its transport uses', () => {
    expect(adminUrlOf(undefined, 'https://pulsar.example.com')).toBe('https://pulsar.example.com');
  });
});
