/**
 * The gateway's error rule is the worker's: a caller reads toolwire's own error texts, and a
 * fault of anything else (whose message may hold a path or a secret) only as "internal error",
 * the detail going to the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import { TransportError } from '../../../src/errors.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { Producer } from '../../../src/transport/transport.js';
import { captureLogger } from '../../support/harness.js';

/** The embedded broker, with the gateway's producer for echo's request topic failing as told. */
class FailingProducers extends MemoryTransport {
  fail: Error | undefined;
  override producer(topic: string): Promise<Producer> {
    if (this.fail && topic === 'persistent://tg/flow/echo-request') return Promise.reject(this.fail);
    return super.producer(topic);
  }
}

/** The SSE events of one invoke. */
async function invoke(base: string): Promise<{ error: { type: string; message: string } | null; end_of_stream: boolean }[]> {
  const res = await fetch(`${base}/v1/tools/echo/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"arguments":{"text":"hi"}}',
  });
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice('data: '.length)) as { error: { type: string; message: string } | null; end_of_stream: boolean });
}

describe('the gateway route', () => {
  const transport = new FailingProducers();
  const logs = captureLogger('info');
  let app: App;
  let base: string;
  beforeAll(async () => {
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: 'config', TOOLWIRE_HTTP_PORT: '0' });
    app = await startApp({ settings, transport, secrets: loadSecrets({}), log: logs.log });
    base = `http://${app.http!.host}:${app.http!.port}`;
  });
  afterAll(async () => {
    await app.stop(100);
  });

  it("tells a caller toolwire's own error, and of any other fault only that it happened", async () => {
    transport.fail = new TransportError('pulsar-ws: cannot open producer for persistent://tg/flow/echo-request: HTTP 403 not authorized to produce on tg/flow');
    const own = await invoke(base);
    expect(own.at(-1)).toMatchObject({
      error: { type: 'gateway-error', message: expect.stringContaining('not authorized to produce on tg/flow') as unknown },
      end_of_stream: true,
    });

    transport.fail = new TypeError("Cannot read properties of undefined (reading '/srv/keys/broker.token')");
    const other = await invoke(base);
    expect(other.at(-1)).toEqual({ error: { type: 'gateway-error', message: 'internal error in the gateway' }, response: '', end_of_stream: true });
    expect(JSON.stringify(other)).not.toContain('/srv/keys');
    expect(logs.lines().some((l) => l.includes('gateway call failed') && l.includes('/srv/keys/broker.token'))).toBe(true);

    transport.fail = undefined;
    expect((await invoke(base)).at(-1)).toMatchObject({ error: null, end_of_stream: true });
  });
});
