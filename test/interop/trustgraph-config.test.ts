/**
 * Fleet config through TrustGraph's own config service (trustgraph-flow 2.11.1, its Cassandra
 * table replaced by an in-memory one: test/interop/py/config_service.py) on the real broker,
 * filled with TrustGraph's own tg-put-config-item and with toolwire's CLI. Two toolwire
 * workers share the subscriptions and follow every change live, with polling off: what they
 * see, they see through the service's pokes.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import type { Transport } from '../../src/transport/transport.js';
import { runCli } from '../support/cli.js';
import { serviceDescriptor, toolDescriptor } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { removeDir, startPulsarApp, suffix, waitUntil, brokerTransport } from '../support/pulsar-app.js';
import { interopPython, startConfigService, tgCall, tgConfigCli, type ConfigServiceFixture } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const { log } = captureLogger('warn');
const TOKEN = `token-${tag}`;

const configTopic = `cfg-${tag}`;
/** Where this test's config service listens: its own queues, so that test files never meet. */
const queues = {
  TOOLWIRE_CONFIG_REQUEST_QUEUE: `request:tg:${configTopic}`,
  TOOLWIRE_CONFIG_RESPONSE_QUEUE: `response:tg:${configTopic}`,
  TOOLWIRE_CONFIG_PUSH_QUEUE: `notify:tg:${configTopic}`,
};
const req = (name: string) => `non-persistent://tg/request/${name}-${tag}`;
const res = (name: string) => `non-persistent://tg/response/${name}-${tag}`;
/** An echo service on req(id) and res(id). */
const echoService = (id: string) => serviceDescriptor(id, { plugin: { kind: 'module', module: 'builtin:echo' } }, { requests: 'non-persistent', tag });
/** As TrustGraph's own tools are written: `type` too. */
const echoTool = (name: string, service: string) =>
  toolDescriptor(name, service, { type: 'tool-service', description: `echo via ${service}`, arguments: [{ name: 'text', type: 'string' }] });

let python: string;
let svc: ConfigServiceFixture;
let workers: App[] = [];
let agent: Transport;
let client: ToolClient;
let emptyDir: string;

const put = (type: string, key: string, value: unknown) =>
  tgConfigCli(python, 'tg-put-config-item', ['-u', svc.gatewayUrl!, '-t', TOKEN, '--type', type, '--key', key, '--value', JSON.stringify(value)]);
const del = (type: string, key: string) => tgConfigCli(python, 'tg-delete-config-item', ['-u', svc.gatewayUrl!, '-t', TOKEN, '--type', type, '--key', key]);
const cli = (args: string[]) => runCli(['config', ...args], { ...queues });
const echo = (service: string, text: string, timeoutMs = 10_000) =>
  client.call({ requestQueue: req(service), responseQueue: res(service), config: {}, arguments: { text }, timeoutMs });

beforeAll(async () => {
  python = await interopPython();
  svc = await startConfigService({ python, pulsarUrl, gatewayToken: TOKEN, topic: configTopic });
  emptyDir = await mkdtemp(join(tmpdir(), 'toolwire-unused-'));
  for (let n = 0; n < 2; n++) {
    workers.push(
      await startPulsarApp({ adminUrl, configDir: emptyDir, log, env: { TOOLWIRE_CONFIG_SOURCE: 'trustgraph', TOOLWIRE_CONFIG_POLL_MS: '0', ...queues } }),
    );
  }
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
}, 300_000);

afterAll(async () => {
  await client?.close();
  await agent?.close();
  for (const w of workers) await w.stop(1_000);
  workers = [];
  await svc?.stop();
  await removeDir(emptyDir);
});

const everyWorker = (what: string, check: (w: App) => boolean) => waitUntil(() => workers.every(check), 20_000, what);

describe('descriptors in TrustGraph’s config service', () => {
  it('start every worker on the service’s (empty) catalog', () => {
    for (const w of workers)
      expect(w.config()).toMatchObject({ source: 'TrustGraph config service, workspace default', version: expect.any(String), rejected: undefined });
  });

  it('put with tg-put-config-item reach every running worker and are served, to TrustGraph’s own client too', async () => {
    expect((await put('tool-service', 'echo', echoService('echo'))).stdout).not.toMatch(/Exception/);
    expect((await put('tool', `say-${tag}`, echoTool(`say-${tag}`, 'echo'))).stdout).not.toMatch(/Exception/);
    await everyWorker('both workers serve the new tool', (w) => w.catalog.tools.has(`say-${tag}`) && w.worker.served().some((s) => s.id === 'echo'));

    const tg = await tgCall({ python, pulsarUrl, requestQueue: req('echo'), responseQueue: res('echo'), arguments: { text: 'through TrustGraph' } });
    expect(tg.lines).toEqual([{ result: 'through TrustGraph' }]);

    // One Shared subscription: the requests are shared by the fleet. One after another: the
    // native client batches concurrent sends, and a Shared subscription hands a batch to one consumer.
    const before = workers.map((w) => w.worker.stats().answered);
    const answers: string[] = [];
    for (let n = 0; n < 40; n++) answers.push(await echo('echo', `n${n}`));
    expect(answers).toEqual(Array.from({ length: 40 }, (_, n) => `n${n}`));
    // A worker counts an answer once its request is acked, after the agent may have read it.
    await vi.waitFor(
      () => {
        for (const [n, w] of workers.entries()) expect(w.worker.stats().answered).toBeGreaterThan(before[n]!);
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it('refuse an invalid put on every worker, which keep serving the last good catalog', async () => {
    const good = workers.map((w) => w.config().version);
    // TrustGraph's CLI checks nothing: the workers must.
    await put('tool', 'ghost', { name: 'ghost', service: 'nowhere' });
    await everyWorker('both refused it', (w) => w.config().rejected !== undefined);
    for (const [n, w] of workers.entries()) {
      expect(w.config().version).toBe(good[n]);
      expect(w.config().rejected?.problems).toEqual([expect.stringMatching(/^trustgraph:default\/tool\/ghost: service: unknown tool-service "nowhere"/)]);
      expect(w.catalog.tools.has('ghost')).toBe(false);
    }
    expect(await echo('echo', 'still served')).toBe('still served');
    await del('tool', 'ghost');
    await everyWorker('the refusal cleared once the item is gone', (w) => w.config().rejected === undefined);
  });

  it('toolwire config refuses, through the broker, a put that would break the catalog, and writes nothing', async () => {
    const r = await cli([
      'put',
      '--pulsar-url',
      pulsarUrl,
      '--admin-url',
      adminUrl,
      '--type',
      'tool',
      '--key',
      'ghost2',
      '--value',
      '{"name":"ghost2","service":"nowhere"}',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not written: the catalog would not validate/);
    expect(r.stderr).toMatch(/tool\/ghost2 \(new value\): service: unknown tool-service "nowhere"/);
    const get = await cli(['get', '-u', svc.gatewayUrl!, '-t', TOKEN, '--type', 'tool', '--key', 'ghost2']);
    expect(get).toMatchObject({ code: 1, stderr: 'no tool item with key ghost2\n' });
    const ok = await cli(['get', '--pulsar-url', pulsarUrl, '--admin-url', adminUrl, '--type', 'tool', '--key', `say-${tag}`]);
    expect(JSON.parse(ok.stdout)).toMatchObject({ name: `say-${tag}`, service: 'echo' });
  });

  it('toolwire config import puts a directory in one request: one reload on each worker', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwire-import-'));
    await mkdir(join(dir, 'tool-service'));
    await mkdir(join(dir, 'tool'));
    await writeFile(join(dir, 'tool-service', 'shout.json'), JSON.stringify(echoService('shout')));
    await writeFile(join(dir, 'tool', 'shout.json'), JSON.stringify(echoTool('shout', 'shout')));
    const refused = await cli(['import', dir, '-u', svc.gatewayUrl!]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/refused the credentials \(HTTP 401\)/);

    const before = workers.map((w) => w.config().reloads.applied);
    const r = await cli(['import', dir, '-u', svc.gatewayUrl!, '-t', TOKEN]);
    expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(/^2 item\(s\) put into TrustGraph API gateway/) });
    await everyWorker('both serve the imported tool', (w) => w.catalog.tools.has('shout'));
    expect(await echo('shout', 'imported')).toBe('imported');
    // Services and tools came in one put, so one poke: never a catalog with the tool and not its service.
    expect(workers.map((w, n) => w.config().reloads.applied - before[n]!)).toEqual([1, 1]);
    expect(workers.map((w) => w.config().reloads.rejected)).toEqual([1, 1]);
    await removeDir(dir);
  });

  it('a deleted service stops being consumed by every worker', async () => {
    const early = await cli(['delete', '-u', svc.gatewayUrl!, '-t', TOKEN, '--type', 'tool-service', '--key', 'shout']);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/not deleted: the catalog would not validate[\s\S]*unknown tool-service "shout"/);

    expect((await cli(['delete', '-u', svc.gatewayUrl!, '-t', TOKEN, '--type', 'tool', '--key', 'shout'])).code).toBe(0);
    expect((await cli(['delete', '-u', svc.gatewayUrl!, '-t', TOKEN, '--type', 'tool-service', '--key', 'shout'])).code).toBe(0);
    await everyWorker('no worker consumes it', (w) => !w.worker.served().some((s) => s.id === 'shout'));
    await expect(echo('shout', 'anyone?', 1_500)).rejects.toThrow(/no final answer within 1500 ms/);
    expect(await echo('echo', 'the others stay')).toBe('the others stay');
  });
});
