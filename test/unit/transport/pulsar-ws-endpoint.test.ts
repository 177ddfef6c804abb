import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { endpointUrl, upgradeError, upgradeReason, webSocketBase } from '../../../src/transport/pulsar-ws-endpoint.js';

describe('pulsar-ws endpoints', () => {
  it('maps the web URL to a WebSocket base', () => {
    expect(webSocketBase('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080');
    expect(webSocketBase('https://broker.example:8443/')).toBe('wss://broker.example:8443');
    expect(webSocketBase('ws://h:8080')).toBe('ws://h:8080');
    expect(() => webSocketBase('pulsar://h:6650')).toThrow(ConfigError);
    expect(() => webSocketBase('not a url')).toThrow(ConfigError);
  });

  it('builds consumer URLs from full and short topic names, encoding each part', () => {
    expect(
      endpointUrl('ws://h:8080', 'consumer', 'persistent://public/default/a:b', 'my sub', { subscriptionType: 'Shared', receiverQueueSize: 10, x: undefined }),
    ).toBe('ws://h:8080/ws/v2/consumer/persistent/public/default/a%3Ab/my%20sub?subscriptionType=Shared&receiverQueueSize=10');
    expect(endpointUrl('ws://h:8080', 'producer', 'request:tg:joke', undefined, {})).toBe('ws://h:8080/ws/v2/producer/non-persistent/tg/request/joke');
    expect(() => endpointUrl('ws://h:8080', 'producer', 'bogus', undefined, {})).toThrow(ConfigError);
  });

  it("reads the reason out of Jetty's error page", () => {
    const body =
      '<html><head><title>Error 409 Failed to create producer/consumer: {&quot;errorMsg&quot;:&quot;Exclusive consumer is already connected&quot;}</title></head></html>';
    expect(upgradeReason(body)).toBe('Error 409 Failed to create producer/consumer: {"errorMsg":"Exclusive consumer is already connected"}');
  });

  it('classifies refusals: 4xx are not retriable except 409, 5xx are', () => {
    expect(upgradeError(400, '', 'consumer', 't', 's').retriable).toBe(false);
    expect(upgradeError(401, '', 'consumer', 't', 's').message).toMatch(/token/);
    expect(upgradeError(404, '', 'producer', 't').retriable).toBe(false);
    expect(upgradeError(409, '', 'consumer', 't', 's').retriable).toBe(true);
    expect(upgradeError(500, '', 'consumer', 't', 's').retriable).toBe(true);
    expect(upgradeError(500, '', 'consumer', 'persistent://a/b/c', 'sub').message).toContain('persistent://a/b/c (subscription sub)');
  });
});
