/**
 * The whole worker process (startApp) following its config directory: changes applied
 * without a restart, an invalid one refused and reported while the last good one serves.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import { ToolResponseError } from '../../../src/client/tool-client.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { serviceDescriptor, toolDescriptor } from '../../support/descriptors.js';
import { captureLogger } from '../../support/harness.js';

async function until(pred: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await pred()) return;
    await sleep(20);
  }
  throw new Error(`never: ${what}`);
}

describe('a worker following its config directory', () => {
  let dir: string;
  let app: App;
  let base: string;
  const echoCall = (text: string, tool = 'echo') =>
    app.client.call({
      requestQueue: 'persistent://tg/flow/echo-request',
      responseQueue: 'non-persistent://tg/response/echo',
      config: {},
      arguments: { text },
      tool,
      timeoutMs: 5000,
    });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-live-'));
    await cp('config/tool-service/echo-service.json', join(dir, 'tool-service', 'echo-service.json'), { recursive: true });
    await cp('config/tool/echo.json', join(dir, 'tool', 'echo.json'), { recursive: true });
    // No poll: what is seen is seen through the directory watch.
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: '0', TOOLWIRE_CONFIG_POLL_MS: '0' });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger().log });
    base = `http://${app.http!.host}:${app.http!.port}`;
  });
  afterEach(async () => {
    await app.stop(100);
    await rm(dir, { recursive: true, force: true });
  });

  it('serves a service and tool added to the directory without a restart', async () => {
    await expect(echoCall('x', 'shout')).rejects.toBeInstanceOf(ToolResponseError);
    const before = app.config().version;
    // The tool first, as a careless copy would: refused until its service arrives too.
    await writeFile(
      join(dir, 'tool', 'shout.json'),
      JSON.stringify(toolDescriptor('shout', 'shout-service', { arguments: [{ name: 'text', type: 'string' }] })),
    );
    const shoutService = serviceDescriptor('shout-service', { plugin: { kind: 'module', module: 'builtin:echo' } });
    await writeFile(join(dir, 'tool-service', 'shout-service.json'), JSON.stringify(shoutService));
    await until(() => app.catalog.tools.has('shout'), 'the new tool in the catalog');
    const shout = await app.client.call({
      requestQueue: shoutService['request-queue'],
      responseQueue: shoutService['response-queue'],
      config: {},
      arguments: { text: 'hello' },
      timeoutMs: 5000,
    });
    expect(shout).toBe('hello');
    expect(app.config().version).not.toBe(before);
    expect(app.config().rejected).toBeUndefined();
    expect(
      app.worker
        .served()
        .map((s) => s.id)
        .sort(),
    ).toEqual(['echo-service', 'shout-service']);
  });

  it('refuses an invalid change, reports it, and keeps serving the last good catalog', async () => {
    const good = app.config().version;
    await writeFile(join(dir, 'tool', 'broken.json'), JSON.stringify({ name: 'broken', service: 'no-such-service' }));
    await until(() => app.config().rejected !== undefined, 'the change refused');
    expect(await echoCall('still here')).toBe('still here');

    const ready = (await (await fetch(`${base}/readyz`)).json()) as { status: string; config: { version: string; rejected: { problems: string[] } } };
    expect(ready.status).toBe('ready');
    expect(ready.config.version).toBe(good);
    expect(ready.config.rejected.problems).toEqual([expect.stringMatching(/broken\.json: service: unknown tool-service "no-such-service"/)]);
    const tools = (await (await fetch(`${base}/v1/tools`)).json()) as { tools: { name: string }[]; config: { version: string; rejected: unknown } };
    expect(tools.tools.map((t) => t.name)).toEqual(['echo']);
    expect(tools.config.version).toBe(good);
    expect(tools.config.rejected).toBeDefined();
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^toolwire_config_rejected 1$/m);
    expect(metrics).toMatch(/^toolwire_config_reloads_total\{result="rejected"\} 1$/m);

    await rm(join(dir, 'tool', 'broken.json'));
    await until(() => app.config().rejected === undefined, 'the refusal cleared');
    expect(app.config().version).toBe(good);
  });

  it('stops consuming a service removed from the directory', async () => {
    await rm(join(dir, 'tool', 'echo.json'));
    await rm(join(dir, 'tool-service', 'echo-service.json'));
    await until(() => app.worker.served().length === 0, 'the service retired');
    const call = app.client.call({
      requestQueue: 'persistent://tg/flow/echo-request',
      responseQueue: 'non-persistent://tg/response/echo',
      config: {},
      arguments: { text: 'anyone?' },
      timeoutMs: 300,
    });
    await expect(call).rejects.toThrow(/no final answer within 300 ms/);
  });
});
