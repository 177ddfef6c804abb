/**
 * What a writer of TrustGraph's config service (its own code, trustgraph-flow 2.11.1, filled
 * with its own tg-put-config-item) can make a toolwire worker execute. An outside review ran
 * `/bin/sh -c 'id > /tmp/x'` on every worker through an MCP stdio descriptor that was then
 * refused: the refusal came from the check, which had already started the command. Here one
 * worker runs on the defaults for that source and one with the operator's allowances; nothing
 * a descriptor names runs unless the worker's own settings allow it, and an allowed MCP server
 * is started once, not again at each reload that leaves it as it was.
 */
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient } from '../../src/client/tool-client.js';
import type { Transport } from '../../src/transport/transport.js';
import { serviceDescriptor, toolDescriptor, type ServiceDescriptor } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { EVERYTHING } from '../support/mcp-everything.js';
import { brokerTransport, removeDir, startPulsarApp, suffix, waitUntil } from '../support/pulsar-app.js';
import { interopPython, startConfigService, tgConfigCli, type ConfigServiceFixture } from './python-fixtures.js';

const pulsarUrl = inject('pulsarUrl');
const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const { log } = captureLogger('warn');
const TOKEN = `token-${tag}`;
const configTopic = `cfg-exec-${tag}`;
const queues = {
  TOOLWIRE_CONFIG_SOURCE: 'trustgraph',
  TOOLWIRE_CONFIG_POLL_MS: '0',
  TOOLWIRE_CONFIG_REQUEST_QUEUE: `request:tg:${configTopic}`,
  TOOLWIRE_CONFIG_RESPONSE_QUEUE: `response:tg:${configTopic}`,
  TOOLWIRE_CONFIG_PUSH_QUEUE: `notify:tg:${configTopic}`,
};
/** A tool-service on non-persistent://tg/request/<id>-<tag> and non-persistent://tg/response/<id>-<tag>. */
const service = (id: string, fields: Partial<ServiceDescriptor> = {}) => serviceDescriptor(id, fields, { requests: 'non-persistent', tag });

let python: string;
let svc: ConfigServiceFixture;
let dir: string;
/** Runs on the defaults: nothing a descriptor names executes. */
let strict: App;
/** Allows one command (a wrapper that counts its starts) and one module root. */
let allowing: App;
let agent: Transport;
let client: ToolClient;

const put = async (type: string, key: string, value: unknown) => {
  const r = await tgConfigCli(python, 'tg-put-config-item', [
    '-u',
    svc.gatewayUrl!,
    '-t',
    TOKEN,
    '--type',
    type,
    '--key',
    key,
    '--value',
    JSON.stringify(value),
  ]);
  expect(r.stdout).not.toMatch(/Exception/);
};
const del = (type: string, key: string) => tgConfigCli(python, 'tg-delete-config-item', ['-u', svc.gatewayUrl!, '-t', TOKEN, '--type', type, '--key', key]);
const problemsOf = (w: App) => w.config().rejected?.problems ?? [];
const both = () => [strict, allowing];
const cleared = (what: string) => waitUntil(() => both().every((w) => w.config().rejected === undefined), 30_000, what);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwire-exec-'));
  await writeFile(
    join(dir, 'plant-marker.mjs'),
    `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(dir, 'module-ran'))}, 'imported');\nexport default () => 'planted';\n`,
  );
  await mkdir(join(dir, 'allowed'));
  await writeFile(join(dir, 'allowed', 'allowed-tools.mjs'), `export default ({ arguments: a }) => 'allowed ' + a.text;\n`);
  // The MCP reference server behind a wrapper that writes a line per start.
  await writeFile(
    join(dir, 'everything.sh'),
    `#!/bin/sh\necho $$ >> ${JSON.stringify(join(dir, 'starts'))}\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(EVERYTHING)} stdio\n`,
  );
  await chmod(join(dir, 'everything.sh'), 0o755);

  python = await interopPython();
  svc = await startConfigService({ python, pulsarUrl, gatewayToken: TOKEN, topic: configTopic });
  strict = await startPulsarApp({ adminUrl, configDir: dir, log, env: queues });
  allowing = await startPulsarApp({
    adminUrl,
    configDir: dir,
    log,
    env: { ...queues, TOOLWIRE_ALLOW_COMMANDS: join(dir, 'everything.sh'), TOOLWIRE_MODULE_ROOTS: join(dir, 'allowed') },
  });
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
}, 300_000);

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await strict?.stop(1_000);
  await allowing?.stop(1_000);
  await svc?.stop();
  await removeDir(dir);
});

describe('what a TrustGraph config writer can make a worker execute', () => {
  it('starts no command an MCP stdio descriptor names, and the refusal names the setting', async () => {
    const marker = join(dir, 'shell-ran');
    await put(
      'tool-service',
      'planted-shell',
      service('planted-shell', { plugin: { kind: 'mcp', transport: 'stdio', command: '/bin/sh', args: ['-c', `id > ${marker}`] } }),
    );
    try {
      await waitUntil(() => both().every((w) => problemsOf(w).length > 0), 30_000, 'both workers refused the change');
      // Both workers have built the change (each refused it), so anything started has run by now.
      expect(existsSync(marker), 'the planted command ran').toBe(false);
      for (const w of both()) {
        expect(problemsOf(w)).toEqual([
          expect.stringMatching(
            /^trustgraph:default\/tool-service\/planted-shell: plugin\.command: the worker does not start "\/bin\/sh" for the TrustGraph config service: .*TOOLWIRE_ALLOW_COMMANDS/,
          ),
        ]);
        expect(w.worker.served().some((s) => s.id === 'planted-shell')).toBe(false);
      }
    } finally {
      await del('tool-service', 'planted-shell');
      await cleared('the refusal cleared once the item is gone');
    }
  });

  it('imports no module file outside the allowed roots', async () => {
    await put('tool-service', 'planted-module', service('planted-module', { plugin: { kind: 'module', module: join(dir, 'plant-marker.mjs') } }));
    try {
      // Built by both: refused (or, had the module been imported, served).
      await waitUntil(() => both().every((w) => problemsOf(w).length > 0 || w.catalog.services.has('planted-module')), 30_000, 'both workers built the change');
      expect(existsSync(join(dir, 'module-ran')), 'the planted module was imported').toBe(false);
      expect(problemsOf(strict)).toEqual([
        expect.stringMatching(
          /plugin\.module: the worker does not import ".*plant-marker\.mjs" .*TOOLWIRE_MODULE_ROOTS is unset, which allows only builtin: modules for this source/,
        ),
      ]);
      expect(problemsOf(allowing)).toEqual([
        expect.stringMatching(
          /plugin\.module: the worker does not import ".*plant-marker\.mjs" .*under no directory of TOOLWIRE_MODULE_ROOTS; add a directory that holds it/,
        ),
      ]);
    } finally {
      await del('tool-service', 'planted-module');
      await cleared('the refusal cleared once the item is gone');
    }
  });

  it('sets no variable a config writer names for an allowed command, and reaches no loopback server', async () => {
    const marker = join(dir, 'node-options-ran');
    // Single quotes only: NODE_OPTIONS reads double quotes as its own.
    const injection = `--import=data:text/javascript,import{writeFileSync}from'node:fs';writeFileSync('${marker}','x')`;
    let hits = 0;
    const loopback = createServer((_req, res) => {
      hits++;
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(loopback.address() as AddressInfo).port}/mcp`;
    await put(
      'tool-service',
      'injected',
      service('injected', { plugin: { kind: 'mcp', transport: 'stdio', command: join(dir, 'everything.sh'), env: { NODE_OPTIONS: injection } } }),
    );
    await put('tool-service', 'inward', service('inward', { plugin: { kind: 'mcp', transport: 'http', url } }));
    try {
      await waitUntil(
        () => problemsOf(allowing).some((p) => p.includes('inward')) && problemsOf(strict).some((p) => p.includes('inward')),
        30_000,
        'both workers refused both items',
      );
      expect(problemsOf(allowing)).toEqual([
        expect.stringMatching(
          /^trustgraph:default\/tool-service\/injected: plugin\.env: the worker does not set NODE_OPTIONS for ".*everything\.sh" for the TrustGraph config service .*TOOLWIRE_ALLOW_COMMAND_ENV is unset/,
        ),
        expect.stringMatching(
          /^trustgraph:default\/tool-service\/inward: plugin\.url: the worker does not connect to 127\.0\.0\.1, a loopback address, for the TrustGraph config service: TOOLWIRE_ALLOW_PRIVATE is unset/,
        ),
      ]);
      expect(existsSync(marker), 'the injected code ran').toBe(false);
      expect(hits).toBe(0);
    } finally {
      await del('tool-service', 'injected');
      await del('tool-service', 'inward');
      await cleared('the refusal cleared once the items are gone');
      await new Promise((resolve) => loopback.close(resolve));
    }
  });

  it('serves what the operator allowed, and starts an unchanged MCP server once over many reloads', async () => {
    await put('tool-service', 'everything', service('everything', { plugin: { kind: 'mcp', transport: 'stdio', command: join(dir, 'everything.sh') } }));
    await put(
      'tool',
      `mcp-echo-${tag}`,
      toolDescriptor(`mcp-echo-${tag}`, 'everything', { 'plugin-options': { tool: 'echo' }, arguments: [{ name: 'message', type: 'string' }] }),
    );
    await waitUntil(() => allowing.catalog.tools.has(`mcp-echo-${tag}`), 30_000, 'the allowing worker serves the MCP tool');
    expect(await client.call({ ...target('everything'), config: {}, arguments: { message: 'hi' }, tool: `mcp-echo-${tag}`, timeoutMs: 15_000 })).toBe(
      'Echo: hi',
    );
    // The strict worker refuses even a named file: its source may start none.
    await waitUntil(() => problemsOf(strict).some((p) => p.includes('plugin.command')), 30_000, 'the strict worker refused the command');
    const starts = async () => (await readFile(join(dir, 'starts'), 'utf8')).trim().split('\n').length;
    // A start for each check (the service's put, then its tool's, unless one reload read both)
    // and one for the session that serves.
    const served = await starts();
    expect(served).toBeGreaterThanOrEqual(2);
    expect(served).toBeLessThanOrEqual(3);

    await put('tool-service', 'allowed-module', service('allowed-module', { plugin: { kind: 'module', module: join(dir, 'allowed', 'allowed-tools.mjs') } }));
    await waitUntil(() => allowing.catalog.services.has('allowed-module'), 30_000, 'the module under the root is served');
    expect(await client.call({ ...target('allowed-module'), config: {}, arguments: { text: 'x' }, timeoutMs: 15_000 })).toBe('allowed x');

    // Reloads that leave the MCP service as it was: its check does not run again.
    await put('tool-service', 'extras', service('extras', { 'config-params': ['op'], plugin: { kind: 'module', module: 'builtin:echo' } }));
    for (let n = 0; n < 5; n++) {
      const applied = allowing.config().reloads.applied;
      await put('tool', `extra-${n}`, toolDescriptor(`extra-${n}`, 'extras', { op: `op-${n}`, arguments: [{ name: 'text', type: 'string' }] }));
      await waitUntil(() => allowing.config().reloads.applied > applied && allowing.catalog.tools.has(`extra-${n}`), 30_000, `reload ${n} applied`);
    }
    expect(await starts()).toBe(served);
    expect(await client.call({ ...target('everything'), config: {}, arguments: { message: 'still' }, tool: `mcp-echo-${tag}`, timeoutMs: 15_000 })).toBe(
      'Echo: still',
    );
  });
});

function target(id: string): { requestQueue: string; responseQueue: string } {
  const t = service(id);
  return { requestQueue: t['request-queue'], responseQueue: t['response-queue'] };
}
