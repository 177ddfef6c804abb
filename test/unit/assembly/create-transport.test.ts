import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createTransport, subscriptionAdmin } from '../../../src/assembly/create-transport.js';
import { tokenAccess } from '../../../src/assembly/broker-access.js';
import { FakeAdminServer } from '../../fakes/fake-admin-server.js';

const log = pino({ level: 'silent' });
const missing = async (): Promise<unknown> => Promise.reject(Object.assign(new Error('not found'), { code: 'ERR_MODULE_NOT_FOUND' }));

describe('createTransport', () => {
  it('makes each kind', async () => {
    const memory = await createTransport({ kind: 'memory' });
    expect(memory.kind).toBe('memory');
    await memory.close();
    const ws = await createTransport({ kind: 'pulsar-ws', serviceUrl: 'pulsar://127.0.0.1:6650', log });
    expect(ws.kind).toBe('pulsar-ws');
    await ws.close();
  });

  it('auto falls back to the WebSocket API when pulsar-client is missing', async () => {
    const t = await createTransport({ kind: 'auto', adminUrl: 'http://127.0.0.1:8080', log, importer: missing });
    expect(t.kind).toBe('pulsar-ws');
    await t.close();
  });

  it('pulsar without pulsar-client is a ConfigError naming pulsar-ws', async () => {
    await expect(createTransport({ kind: 'pulsar', serviceUrl: 'pulsar://127.0.0.1:6650', log, importer: missing })).rejects.toThrow(/pulsar-ws/);
  });

  it('gives the WebSocket transport the admin call for subscriptions at earliest, on the same web port', async () => {
    const admin = new FakeAdminServer();
    await admin.start();
    admin.override = (_req, res) => {
      res.writeHead(204).end();
      return true;
    };
    try {
      const calls = subscriptionAdmin(admin.url.replace('http://', 'ws://'), await tokenAccess('secret-token', log));
      expect(await calls.createSubscriptionAtEarliest('persistent://tg/flow/early', 'first')).toBe('created');
      expect(admin.seen).toEqual([
        expect.objectContaining({ method: 'PUT', path: '/admin/v2/persistent/tg/flow/early/subscription/first', authorization: 'Bearer secret-token' }),
      ]);
    } finally {
      await admin.stop();
    }
  });
});
