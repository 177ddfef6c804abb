/**
 * A worker following its config directory with an MCP stdio service (the MCP project's
 * server-everything, behind a wrapper that writes a line per start): reloads that leave the
 * service as it was start no server, neither for the check nor for the plugin, even when
 * its tools change.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { serviceDescriptor, toolDescriptor } from '../../support/descriptors.js';
import { captureLogger } from '../../support/harness.js';
import { EVERYTHING } from '../../support/mcp-everything.js';
import { waitUntil } from '../../support/pulsar-app.js';

const json = (v: unknown) => JSON.stringify(v, null, 2);
const everything = serviceDescriptor(
  'everything',
  { 'config-params': ['op'], plugin: { kind: 'mcp', transport: 'stdio', command: './everything.sh' } },
  { requests: 'non-persistent' },
);

describe('reloads of a config with an unchanged MCP stdio service', () => {
  let dir: string;
  let app: App;
  const starts = async () => (await readFile(join(dir, 'starts'), 'utf8')).trim().split('\n').length;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-mcp-reload-'));
    await mkdir(join(dir, 'tool-service'));
    await mkdir(join(dir, 'tool'));
    await writeFile(
      join(dir, 'everything.sh'),
      `#!/bin/sh\necho $$ >> ${JSON.stringify(join(dir, 'starts'))}\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(EVERYTHING)} stdio\n`,
    );
    await chmod(join(dir, 'everything.sh'), 0o755);
    await writeFile(join(dir, 'tool-service', 'everything.json'), json(everything));
    await writeFile(
      join(dir, 'tool', 'mcp-echo.json'),
      json(toolDescriptor('mcp-echo', 'everything', { op: 'echo', 'plugin-options': { tool: 'echo' }, arguments: [{ name: 'message', type: 'string' }] })),
    );
    await writeFile(
      join(dir, 'tool-service', 'extras.json'),
      json(serviceDescriptor('extras', { 'config-params': ['op'], plugin: { kind: 'module', module: 'builtin:echo' } }, { requests: 'non-persistent' })),
    );
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONFIG_POLL_MS: '0' });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger('warn').log });
  });
  afterEach(async () => {
    await app?.stop(100);
    await rm(dir, { recursive: true, force: true });
  });

  it('start the server once for the check and once to serve, then never again', async () => {
    const call = (message: string) =>
      app.client.call({
        requestQueue: everything['request-queue'],
        responseQueue: everything['response-queue'],
        config: {},
        arguments: { message },
        tool: 'mcp-echo',
        timeoutMs: 10_000,
      });
    expect(await call('first')).toBe('Echo: first');
    expect(await starts()).toBe(2);

    for (let n = 0; n < 10; n++) {
      const applied = app.config().reloads.applied;
      await writeFile(
        join(dir, 'tool', `extra-${n}.json`),
        json(toolDescriptor(`extra-${n}`, 'extras', { op: `op-${n}`, arguments: [{ name: 'text', type: 'string' }] })),
      );
      await waitUntil(() => app.config().reloads.applied > applied && app.catalog.tools.has(`extra-${n}`), 10_000, `reload ${n} applied`, 20);
    }
    expect(app.config().reloads.applied).toBeGreaterThanOrEqual(11);
    expect(await starts()).toBe(2);
    expect(await call('after ten reloads')).toBe('Echo: after ten reloads');
  });

  it('checks the service again when one of its tools changes, over the session that serves it', async () => {
    const applied = app.config().reloads.applied;
    await writeFile(
      join(dir, 'tool', 'mcp-sum.json'),
      json(toolDescriptor('mcp-sum', 'everything', { op: 'sum', 'plugin-options': { tool: 'no-such-tool' } })),
    );
    await waitUntil(() => app.config().rejected !== undefined, 10_000, 'the change refused', 20);
    expect(app.config().rejected?.problems).toEqual([
      expect.stringMatching(/tool\/mcp-sum\.json: plugin-options\.tool: the MCP server of everything has no tool "no-such-tool"/),
    ]);
    expect(app.config().reloads.applied).toBe(applied);
    await writeFile(join(dir, 'tool', 'mcp-sum.json'), json(toolDescriptor('mcp-sum', 'everything', { op: 'sum', 'plugin-options': { tool: 'get-sum' } })));
    await waitUntil(() => app.catalog.tools.has('mcp-sum'), 10_000, 'the fixed change applied', 20);
    // Both checks asked the running server: no start beyond the first check's and the plugin's.
    expect(await starts()).toBe(2);
  });
});
