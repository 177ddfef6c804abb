/**
 * A live change of one descriptor in a fleet: only what changed is read and built again, the
 * rules between descriptors still hold, and what is removed is retired.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { captureLogger } from '../../support/harness.js';

const SERVICES = ['alpha', 'beta', 'gamma'] as const;
const requestQueue = (id: string) => `persistent://tg/flow/${id}-request`;

const serviceDescriptor = (id: string, queue = requestQueue(id)) => ({
  id,
  'request-queue': queue,
  'response-queue': 'non-persistent://tg/response/fleet',
  'config-params': ['op'],
  plugin: { kind: 'module', module: 'builtin:echo' },
});

/** A tool whose answer (the echo of its hidden parameter) says which version of it is served. */
const toolDescriptor = (service: string, t: number, version = 'v0', name = `${service}-t${t}`) => ({
  name,
  service,
  op: `t${t}`,
  arguments: [{ name: 'version', type: 'string', form: 'form' }],
  'runtime-parameters': { version },
});

async function until(pred: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(20);
  }
}

describe('a live change in a fleet', () => {
  let dir: string;
  let app: App;
  const write = (type: string, key: string, value: unknown) => writeFile(join(dir, type, `${key}.json`), JSON.stringify(value));
  const call = (service: string, t: number) =>
    app.client.call({
      requestQueue: requestQueue(service),
      responseQueue: 'non-persistent://tg/response/fleet',
      config: { op: `t${t}` },
      arguments: {},
      timeoutMs: 5000,
    });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-incremental-'));
    await mkdir(join(dir, 'tool-service'));
    await mkdir(join(dir, 'tool'));
    for (const id of SERVICES) {
      await write('tool-service', id, serviceDescriptor(id));
      for (const t of [0, 1]) await write('tool', `${id}-t${t}`, toolDescriptor(id, t));
    }
    // No poll: each read after start looks at the files the directory watch names.
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: 'off', TOOLWIRE_CONFIG_POLL_MS: '0' });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger().log });
  });
  afterEach(async () => {
    await app.stop(100);
    await rm(dir, { recursive: true, force: true });
  });

  it('serves a change of one tool and leaves every other service and tool the very same objects, their plugins running', async () => {
    const before = app.catalog;
    const plugins = new Map(SERVICES.map((id) => [id, app.worker.pluginOf(id)]));
    expect(await call('alpha', 1)).toContain('v0');

    await write('tool', 'alpha-t1', toolDescriptor('alpha', 1, 'v1'));
    await until(async () => (await call('alpha', 1)).includes('v1'), 'the changed tool answers with its change');

    const after = app.catalog;
    expect(after).not.toBe(before);
    for (const id of SERVICES) {
      expect(after.services.get(id)).toBe(before.services.get(id));
      expect(app.worker.pluginOf(id)).toBe(plugins.get(id));
    }
    for (const name of before.tools.keys()) {
      if (name === 'alpha-t1') expect(after.tools.get(name)).not.toBe(before.tools.get(name));
      else expect(after.tools.get(name)).toBe(before.tools.get(name));
    }
    expect(await call('beta', 0)).toContain('v0');
  });

  it('refuses a change that breaks a rule between descriptors, the last good catalog serving, and takes the next good one', async () => {
    const served = app.catalog;
    const breaks = [
      {
        rule: 'two services on one request topic and subscription',
        type: 'tool-service',
        key: 'delta',
        value: { ...serviceDescriptor('delta', requestQueue('alpha')), subscription: 'alpha-request' },
        problem: /would consume .*alpha-request.* as service "alpha"/,
      },
      {
        rule: 'a tool of no service',
        type: 'tool',
        key: 'stray',
        value: toolDescriptor('nowhere', 0, 'v0', 'stray'),
        problem: /unknown tool-service "nowhere"/,
      },
      {
        rule: 'two tools of one name',
        type: 'tool',
        key: 'copy',
        value: toolDescriptor('gamma', 5, 'v0', 'beta-t0'),
        problem: /duplicate tool name "beta-t0"/,
      },
      {
        rule: 'two tools of one service with the same config values',
        type: 'tool',
        key: 'twin',
        value: toolDescriptor('beta', 1, 'v0', 'twin'),
        problem: /same config values as/,
      },
      {
        rule: 'two services of one id',
        type: 'tool-service',
        key: 'beta-again',
        value: serviceDescriptor('beta', requestQueue('beta-2')),
        problem: /duplicate tool-service id "beta"/,
      },
    ];
    for (const b of breaks) {
      await write(b.type, b.key, b.value);
      await until(() => app.config().rejected?.problems.some((p) => b.problem.test(p)) === true, `${b.rule} refused`);
      expect(app.catalog).toBe(served);
      expect(await call('alpha', 0)).toContain('v0');
      await rm(join(dir, b.type, `${b.key}.json`));
      await until(() => app.config().rejected === undefined, `${b.rule} taken back`);
    }

    await write('tool', 'gamma-t2', toolDescriptor('gamma', 2, 'v2'));
    await until(() => app.catalog.tools.has('gamma-t2'), 'the next good change served');
    expect(await call('gamma', 2)).toContain('v2');
    expect(app.catalog.services.get('alpha')).toBe(served.services.get('alpha'));
  });

  it('retires a removed service and its tools while the others serve on', async () => {
    const beta = app.catalog.services.get('beta');
    for (const t of [0, 1]) await rm(join(dir, 'tool', `gamma-t${t}.json`));
    await rm(join(dir, 'tool-service', 'gamma.json'));
    await until(() => !app.worker.served().some((s) => s.id === 'gamma'), 'gamma no longer served');

    expect(app.catalog.services.has('gamma')).toBe(false);
    expect([...app.catalog.tools.keys()].filter((name) => name.startsWith('gamma'))).toEqual([]);
    expect(app.worker.pluginOf('gamma')).toBeUndefined();
    expect(app.catalog.services.get('beta')).toBe(beta);
    expect(await call('beta', 1)).toContain('v0');
  });
});
