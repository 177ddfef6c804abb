import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BrokerConfigApi } from '../../../src/config/trustgraph/broker-config-api.js';
import { DEFAULT_CONFIG_QUEUES } from '../../../src/config/trustgraph/config-wire.js';
import { ID_PROPERTY } from '../../../src/envelope/properties.js';
import { AbortedError, TimeoutError } from '../../../src/errors.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { Producer, Transport } from '../../../src/transport/transport.js';
import { captureLogger } from '../../support/harness.js';

/**
 * The in-memory broker, with opening a producer and sending made slow (as a broker slow to
 * accept a producer, or a send waiting out the native client's send timeout). Neither looks
 * at the signal: the request's deadline must hold all the same.
 */
class SlowTransport implements Transport {
  readonly kind = 'memory';
  producerDelayMs = 0;
  sendDelayMs = 0;
  /** Sends that have come back. */
  sendsDone = 0;
  /** Resolves when the first send begins. */
  readonly sending: Promise<void>;
  private began: () => void = () => undefined;
  constructor(readonly inner = new MemoryTransport()) {
    this.sending = new Promise((resolve) => (this.began = resolve));
  }
  get connected(): boolean {
    return this.inner.connected;
  }
  subscribe: Transport['subscribe'] = (options) => this.inner.subscribe(options);
  async producer(topic: string): Promise<Producer> {
    await sleep(this.producerDelayMs);
    const p = await this.inner.producer(topic);
    return {
      topic,
      send: async (message) => {
        this.began();
        await sleep(this.sendDelayMs);
        await p.send(message);
        this.sendsDone++;
      },
    };
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A config service on the in-memory broker that answers every request with `version`. */
async function answerer(transport: MemoryTransport, version: number): Promise<void> {
  const sub = await transport.subscribe({ topic: DEFAULT_CONFIG_QUEUES.request, subscription: 'config-service' });
  const out = await transport.producer(DEFAULT_CONFIG_QUEUES.response);
  void (async () => {
    for await (const m of sub) {
      await m.ack();
      await out.send({ data: JSON.stringify({ version, error: null }), properties: { [ID_PROPERTY]: m.properties[ID_PROPERTY]! } });
    }
  })();
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

describe('BrokerConfigApi', () => {
  it('answers a request by its id', async () => {
    const transport = new SlowTransport();
    await answerer(transport.inner, 7);
    const api = new BrokerConfigApi(transport, captureLogger().log, { timeoutMs: 5000 });
    await expect(api.request({ operation: 'config', workspace: 'default' })).resolves.toMatchObject({ version: 7 });
    await api.close();
    await transport.close();
  });

  it('reads every answer on one subscription, however many requests it makes', async () => {
    const transport = new SlowTransport();
    await answerer(transport.inner, 3);
    const api = new BrokerConfigApi(transport, captureLogger().log, { timeoutMs: 5000 });
    for (let i = 0; i < 5; i++) await expect(api.request({ operation: 'config', workspace: 'default' })).resolves.toMatchObject({ version: 3 });
    // One reader of its own: a second loop on the same subscription failed, and each read then opened another.
    expect(transport.inner.subscriptionNames(DEFAULT_CONFIG_QUEUES.response).filter((n) => n.startsWith('toolwire-config-'))).toHaveLength(1);
    await api.close();
    expect(transport.inner.subscriptionNames(DEFAULT_CONFIG_QUEUES.response).filter((n) => n.startsWith('toolwire-config-'))).toHaveLength(0);
    await transport.close();
  });

  it('times out a send slower than the deadline, with no unhandled rejection', async () => {
    const transport = new SlowTransport();
    transport.sendDelayMs = 300;
    const api = new BrokerConfigApi(transport, captureLogger().log, { timeoutMs: 100 });
    await expect(api.request({ operation: 'config', workspace: 'default' })).rejects.toBeInstanceOf(TimeoutError);
    // At the deadline, not once the send came back.
    expect(transport.sendsDone).toBe(0);
    expect(unhandled).toEqual([]);
    await api.close();
    await transport.close();
  });

  it('times out a producer slower to open than the deadline, with no unhandled rejection', async () => {
    const transport = new SlowTransport();
    transport.producerDelayMs = 300;
    const api = new BrokerConfigApi(transport, captureLogger().log, { timeoutMs: 100 });
    await expect(api.request({ operation: 'config', workspace: 'default' })).rejects.toBeInstanceOf(TimeoutError);
    expect(unhandled).toEqual([]);
    await api.close();
    await transport.close();
  });

  it('stops a request its caller aborts during a slow send, with no unhandled rejection', async () => {
    const transport = new SlowTransport();
    transport.sendDelayMs = 300;
    const api = new BrokerConfigApi(transport, captureLogger().log, { timeoutMs: 5000 });
    const request = api.request({ operation: 'config', workspace: 'default' }, AbortSignal.timeout(100));
    await expect(request).rejects.toBeInstanceOf(AbortedError);
    expect(unhandled).toEqual([]);
    await api.close();
    await transport.close();
  });

  it('fails a request in flight when the client closes, with no unhandled rejection', async () => {
    const transport = new SlowTransport();
    transport.sendDelayMs = 300;
    const api = new BrokerConfigApi(transport, captureLogger().log, { timeoutMs: 5000 });
    const request = api.request({ operation: 'config', workspace: 'default' });
    await transport.sending;
    await api.close();
    await expect(request).rejects.toBeInstanceOf(AbortedError);
    expect(unhandled).toEqual([]);
    await transport.close();
  });
});
