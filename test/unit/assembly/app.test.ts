/**
 * startApp binds its HTTP port before the worker takes any request, and a start that fails
 * unwinds what it made: no worker left consuming, every plugin closed.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp } from '../../../src/assembly/app.js';
import { ToolClient } from '../../../src/client/tool-client.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { z } from 'zod';
import { defaultRegistry } from '../../../src/plugins/default-registry.js';
import { serviceDescriptor } from '../../support/descriptors.js';
import { captureLogger } from '../../support/harness.js';

describe('starting a worker process whose HTTP port is taken', () => {
  let dir: string;
  let taken: Server;
  let port: number;
  const svc = serviceDescriptor('svc', { plugin: { kind: 'test', behaviour: 'count' } });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-start-'));
    await mkdir(join(dir, 'tool-service'));
    await writeFile(join(dir, 'tool-service', 'svc.json'), JSON.stringify(svc));
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    port = (taken.address() as { port: number }).port;
  });
  afterEach(async () => {
    await new Promise((r) => taken.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('fails before taking a request, and closes the plugins it made', async () => {
    let invoked = 0;
    let closed = 0;
    const registry = defaultRegistry();
    registry.register({
      kind: 'test',
      serviceOptions: z.object({ behaviour: z.string() }),
      create: async () => ({ kind: 'test', invoke: async () => String(++invoked), close: async () => void closed++ }),
    });
    const transport = new MemoryTransport();
    const settings = readSettings({
      TOOLWIRE_CONFIG_DIR: dir,
      TOOLWIRE_HTTP_HOST: '127.0.0.1',
      TOOLWIRE_HTTP_PORT: String(port),
      TOOLWIRE_CONFIG_POLL_MS: '0',
    });
    await expect(startApp({ settings, transport, secrets: loadSecrets({}), log: captureLogger().log, registry })).rejects.toThrow(/EADDRINUSE/);
    expect(closed).toBe(1);
    // Nothing consumes the service's queue: a request finds no worker.
    const client = new ToolClient(transport);
    await expect(
      client.call({
        requestQueue: svc['request-queue'],
        responseQueue: svc['response-queue'],
        config: {},
        arguments: {},
        timeoutMs: 300,
      }),
    ).rejects.toThrow(/no final answer within 300 ms/);
    expect(invoked).toBe(0);
    await client.close();
    await transport.close();
  });
});
