/** A subscription at earliest over the WebSocket API goes through the admin call it is given. */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { PulsarWsTransport } from '../../../src/transport/pulsar-ws-transport.js';
import { FakePulsarWs } from '../../fakes/fake-pulsar-ws.js';

const log = pino({ level: 'silent' });

describe('pulsar-ws subscriptions at earliest', () => {
  let fake: FakePulsarWs | undefined;
  let transport: PulsarWsTransport | undefined;
  afterEach(async () => {
    await transport?.close();
    await fake?.stop();
  });

  it('creates a persistent subscription through the admin call before its socket opens', async () => {
    fake = await FakePulsarWs.start();
    const made: string[] = [];
    transport = new PulsarWsTransport({
      kind: 'pulsar-ws',
      url: fake.url,
      log,
      admin: {
        createSubscriptionAtEarliest: async (topic, subscription) => {
          made.push(`${topic} ${subscription} (sockets open: ${fake!.connections.length})`);
          return 'created';
        },
      },
    });
    const sub = await transport.subscribe({ topic: 'persistent://tg/flow/early', subscription: 'first', initialPosition: 'earliest' });
    expect(made).toEqual(['persistent://tg/flow/early first (sockets open: 0)']);
    expect(fake.connections).toHaveLength(1);
    await sub.close();
  });

  it('refuses one when it was given no admin call, and needs none otherwise', async () => {
    fake = await FakePulsarWs.start();
    transport = new PulsarWsTransport({ kind: 'pulsar-ws', url: fake.url, log });
    await expect(transport.subscribe({ topic: 'persistent://tg/flow/early', subscription: 'first', initialPosition: 'earliest' })).rejects.toThrow(
      /needs the admin client/,
    );
    const latest = await transport.subscribe({ topic: 'persistent://tg/flow/early', subscription: 'second' });
    await latest.close();
  });
});
