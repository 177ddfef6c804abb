/**
 * The compose stack (docker-compose.yml as shipped: the tokens, Pulsar with authentication and
 * authorization, the bootstrap, toolwire:local) driven from the host: the worker's privileges,
 * the broker's ports unpublished until the broker-ports profile publishes them, anonymous
 * clients refused by the broker, a tool call through the gateway (the token from the secrets
 * volume) and one over the broker (the agent role's token), a stdio MCP server that cannot
 * read the worker's environment or secrets, `docker stop` of the worker with requests in
 * flight on a persistent topic, none lost, and the tokens kept by a second `up`.
 * Needs a Docker engine, the images and toolwire:local (scripts/containers-ci.sh).
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { chmod, cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { freePort } from '../../bench/free-port.js';
import { ToolClient } from '../../src/client/tool-client.js';
import { createTransport } from '../../src/assembly/create-transport.js';
import { tokenAccess } from '../../src/assembly/broker-access.js';
import type { Transport } from '../../src/transport/transport.js';
import { runCli } from '../support/cli.js';
import { serviceDescriptor, toolDescriptor } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { waitUntil } from '../support/pulsar-app.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PROJECT = `toolwire-ci-${process.pid}`;
const SLOW_MS = 300;
/** The slow tool's topics, both persistent: the agent may produce on tg/request and consume on tg/response. */
const SLOW = { requestQueue: 'persistent://tg/request/slow', responseQueue: 'persistent://tg/response/slow' };
const SECRETS = ['/run/toolwire/secrets.json', '/run/toolwire/pulsar.token'];

/** A stdio MCP server whose one tool, `probe`, reports who it runs as and what of the worker's it could read. */
const PROBE_SERVER = `import { readFileSync, readdirSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const attempt = (f) => { try { f(); return 'done'; } catch (err) { return err.code ?? String(err); } };
const server = new McpServer({ name: 'probe', version: '1.0.0' });
server.registerTool('probe', { description: 'what this server can reach of the worker' }, async () => {
  const paths = ['/proc/1/environ', '/proc/' + process.ppid + '/environ', ...${JSON.stringify(SECRETS)}];
  const report = {
    uid: process.getuid(),
    gid: process.getgid(),
    groups: process.getgroups(),
    ppid: process.ppid,
    capEff: /CapEff:\\s*(\\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1],
    reads: Object.fromEntries(paths.map((p) => [p, attempt(() => readFileSync(p))])),
    list: attempt(() => readdirSync('/run/toolwire')),
    setuid0: attempt(() => process.setuid(0)),
  };
  return { content: [{ type: 'text', text: JSON.stringify(report) }] };
});
await server.connect(new StdioServerTransport());
`;

let compose: string[];
let env: NodeJS.ProcessEnv;
let configDir: string;
let gateway: string;
let adminUrl: string;
let webPort: number;
let gatewayToken: string;
let agentToken: string;

async function composeRun(...args: string[]): Promise<string> {
  const [cmd, ...pre] = compose;
  const r = await run(cmd!, [...pre, '-p', PROJECT, '-f', join(REPO, 'docker-compose.yml'), ...args], { cwd: REPO, env, maxBuffer: 20 * 1024 * 1024 });
  return r.stdout;
}

async function containerOf(service: string): Promise<string> {
  return (await composeRun('ps', '-q', service)).trim();
}

/** The gateway's token, as the compose file's header tells the operator to read it. */
async function readGatewayToken(): Promise<string> {
  return (await composeRun('exec', '-T', 'toolwire', 'node', '-p', 'require("/run/toolwire/secrets.json")["http-token"]')).trim();
}

/** The HTTP status a WebSocket upgrade gets (101 when it opens), the socket closed either way. */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, handshakeTimeout: 10_000 });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('open', () => {
      resolve(101);
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

/** Whether something accepts a TCP connection on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await writeFile(path, JSON.stringify(value));
}

beforeAll(async () => {
  // `docker compose` (the v2 plugin) where it exists, else Debian's docker-compose 1.29: both run the file unchanged.
  compose = await run('docker', ['compose', 'version']).then(
    () => ['docker', 'compose'],
    () => ['docker-compose'],
  );
  configDir = await mkdtemp(join(tmpdir(), 'toolwire-stack-'));
  await cp(join(REPO, 'config'), configDir, { recursive: true });
  // A slow tool on a persistent topic an agent may produce on (tg/request): requests are in flight when the worker is stopped.
  await writeFile(
    join(configDir, 'slow.mjs'),
    `export default async ({ arguments: a }) => { await new Promise((r) => setTimeout(r, ${SLOW_MS})); return 'done ' + a.n; };\n`,
  );
  await writeJson(
    join(configDir, 'tool-service', 'slow-service.json'),
    serviceDescriptor('slow-service', {
      'request-queue': SLOW.requestQueue,
      'response-queue': SLOW.responseQueue,
      plugin: { kind: 'module', module: './slow.mjs' },
      concurrency: 8,
    }),
  );
  await writeJson(
    join(configDir, 'tool', 'slow.json'),
    toolDescriptor('slow', 'slow-service', { description: 'answers after a while', arguments: [{ name: 'n', type: 'number' }] }),
  );
  // A stdio MCP server the worker starts (as the image's MCP_STDIO_UID): it tries the worker's secrets.
  await writeFile(join(configDir, 'probe-server.mjs'), PROBE_SERVER);
  await writeJson(
    join(configDir, 'tool-service', 'probe-service.json'),
    serviceDescriptor(
      'probe-service',
      { plugin: { kind: 'mcp', transport: 'stdio', command: 'node', args: ['/app/config/probe-server.mjs'] } },
      { requests: 'non-persistent' },
    ),
  );
  await writeJson(
    join(configDir, 'tool', 'probe.json'),
    toolDescriptor('probe', 'probe-service', { description: "what a stdio server can reach of the worker's" }),
  );
  // The worker (uid 0 without CAP_DAC_OVERRIDE) and its stdio server (uid 10001) read the directory through the bind mount by its mode bits.
  await run('chmod', ['-R', 'a+rX', configDir]);
  await chmod(configDir, 0o755);
  const [pulsarPort, httpPort] = [await freePort(), await freePort()];
  webPort = await freePort();
  env = {
    ...process.env,
    TOOLWIRE_CONFIG_HOST_DIR: configDir,
    TOOLWIRE_PULSAR_PORT: String(pulsarPort),
    TOOLWIRE_PULSAR_WEB_PORT: String(webPort),
    TOOLWIRE_HTTP_HOST_PORT: String(httpPort),
  };
  gateway = `http://127.0.0.1:${httpPort}`;
  adminUrl = `http://127.0.0.1:${webPort}`;
  await composeRun('up', '-d', '--no-build');
  // Each probe bounded: one sent while the worker's container is still starting can get no
  // answer and no error from the published port, and fetch would wait on it for 300 s.
  await waitUntil(async () => (await fetch(`${gateway}/readyz`, { signal: AbortSignal.timeout(5_000) })).status === 200, 240_000, 'the stack ready');
  gatewayToken = await readGatewayToken();
  agentToken = (await composeRun('exec', '-T', 'pulsar', 'cat', 'keys/agent.token')).trim();
});

afterAll(async () => {
  if (compose)
    await composeRun('--profile', 'broker-ports', 'down', '-v', '--remove-orphans').catch((err: unknown) =>
      process.stderr.write(`compose down: ${String(err)}\n`),
    );
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

describe('the compose stack, from the host', () => {
  it('runs the worker as uid 0 with CAP_SETUID, CAP_SETGID and CAP_KILL only, no_new_privs, a read-only root, healthy', async () => {
    const id = await containerOf('toolwire');
    await waitUntil(async () => (await run('docker', ['inspect', '--format', '{{.State.Health.Status}}', id])).stdout.trim() === 'healthy', 60_000, 'healthy');
    const status = await composeRun('exec', '-T', 'toolwire', 'cat', '/proc/1/status');
    const field = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, 'm').exec(status)?.[1]?.trim();
    expect(field('Uid')?.split(/\s+/)).toEqual(['0', '0', '0', '0']);
    expect(field('CapEff')).toBe('00000000000000e0');
    expect(field('CapBnd')).toBe('00000000000000e0');
    expect(field('CapAmb')).toBe('0000000000000000');
    expect(field('NoNewPrivs')).toBe('1');
    const { stdout } = await run('docker', ['inspect', '--format', '{{.HostConfig.ReadonlyRootfs}}', id]);
    expect(stdout.trim()).toBe('true');
  });

  it('answers a tool call through the gateway with the token from the secrets volume, and refuses one without it', async () => {
    expect(gatewayToken).toMatch(/^[0-9a-f]{64}$/);
    const viaGateway = await runCli(['call', 'tell-joke', '--args', '{"topic":"cats"}', '--url', gateway], { TOOLWIRE_HTTP_TOKEN: 'env:GW', GW: gatewayToken });
    expect(viaGateway.code, viaGateway.stderr).toBe(0);
    expect(viaGateway.stdout.length).toBeGreaterThan(10);
    const refused = await runCli(['call', 'tell-joke', '--args', '{}', '--url', gateway]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('401');
  });

  it("keeps a stdio MCP server away from the worker's environment and secrets", async () => {
    const r = await runCli(['call', 'probe', '--url', gateway], { TOOLWIRE_HTTP_TOKEN: 'env:GW', GW: gatewayToken });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      uid: number;
      gid: number;
      groups: number[];
      ppid: number;
      capEff: string;
      reads: Record<string, string>;
      list: string;
      setuid0: string;
    };
    expect(report).toMatchObject({ uid: 10001, gid: 10001, groups: [10001], ppid: 1, capEff: '0000000000000000', list: 'EACCES', setuid0: 'EPERM' });
    expect(report.reads).toEqual(Object.fromEntries(['/proc/1/environ', ...SECRETS].map((p) => [p, 'EACCES'])));
  });

  it("publishes the broker's ports only with the broker-ports profile, and the broker refuses clients without a token", async () => {
    const pulsar = await containerOf('pulsar');
    const { stdout: bindings } = await run('docker', ['inspect', '--format', '{{json .HostConfig.PortBindings}}', pulsar]);
    expect(Object.keys((JSON.parse(bindings) as Record<string, unknown> | null) ?? {})).toEqual([]);
    expect(await listening(webPort)).toBe(false);

    await composeRun('--profile', 'broker-ports', 'up', '-d', '--no-build', 'broker-ports');
    await waitUntil(
      async () => (await fetch(`${adminUrl}/admin/v2/clusters`, { signal: AbortSignal.timeout(5_000) })).status === 401,
      60_000,
      'the forwarded port',
    );
    const ws = adminUrl.replace(/^http/, 'ws');
    const producer = `${ws}/ws/v2/producer/persistent/tg/request/anonymous`;
    // Anonymous: what a web page the operator opens could try (Origin is any).
    expect(await upgradeStatus(producer, { Origin: 'https://attacker.example' })).toBe(401);
    expect(await upgradeStatus(producer, { Authorization: 'Bearer not-a-token' })).toBe(401);
    // The agent role produces requests, and reads no one's requests.
    const agent = { Authorization: `Bearer ${agentToken}` };
    expect(await upgradeStatus(producer, agent)).toBe(101);
    expect(await upgradeStatus(`${ws}/ws/v2/consumer/persistent/tg/request/anonymous/peek`, agent)).toBe(403);
  });

  it("answers a tool call over the broker with the agent role's token", async () => {
    const viaBroker = await runCli(['call', 'calculate', '--args', '{"expression":"(2+3)*4"}', '-T', 'pulsar-ws', '--admin-url', adminUrl], {
      PULSAR_TOKEN: agentToken,
    });
    expect(viaBroker.code, viaBroker.stderr).toBe(0);
    expect(viaBroker.stdout.trim()).toBe('20');
  });

  it('loses no request when the worker is stopped with requests in flight (persistent topic)', async () => {
    const { log } = captureLogger('warn');
    const access = await tokenAccess(agentToken, log);
    const agent: Transport = await createTransport({ kind: 'pulsar-ws', adminUrl, access, log, ws: { connectTimeoutMs: 15_000 } });
    const client = new ToolClient(agent, log);
    try {
      const N = 120;
      let answered = 0;
      const calls = Array.from({ length: N }, (_, n) =>
        client
          .call({
            ...SLOW,
            tool: 'slow',
            config: {},
            arguments: { n },
            timeoutMs: 180_000,
          })
          .then((text) => {
            answered++;
            return text;
          }),
      );
      // 8 at a time, 300 ms each: stop once some are answered and many are still queued or running.
      await waitUntil(() => answered >= 16, 60_000, 'first answers');
      const id = await containerOf('toolwire');
      await run('docker', ['stop', '-t', '45', id]);
      const { stdout } = await run('docker', ['inspect', '--format', '{{.State.ExitCode}}', id]);
      expect(stdout.trim()).toBe('0');
      expect(answered).toBeLessThan(N);
      await run('docker', ['start', id]);
      const texts = await Promise.all(calls);
      expect(new Set(texts)).toEqual(new Set(Array.from({ length: N }, (_, n) => `done ${n}`)));
    } finally {
      await client.close();
      await agent.close();
      access.close();
    }
  });

  it('keeps the tokens on a later `up`', async () => {
    await composeRun('up', '-d', '--no-build');
    const logs = await composeRun('logs', '--no-color', 'tokens');
    expect(logs).toContain('tokens: kept from an earlier up');
    await waitUntil(async () => (await fetch(`${gateway}/readyz`, { signal: AbortSignal.timeout(5_000) })).status === 200, 120_000, 'the stack ready again');
    expect(await readGatewayToken()).toBe(gatewayToken);
    expect((await composeRun('exec', '-T', 'pulsar', 'cat', 'keys/agent.token')).trim()).toBe(agentToken);
  });
});
