/**
 * The compose stack (docker-compose.yml as shipped: Pulsar, the bootstrap, toolwire:local)
 * driven from the host: a tool call through the gateway and one over the broker, and
 * `docker stop` of the worker with requests in flight on a persistent topic, none lost.
 * Needs a Docker engine, the images and toolwire:local (scripts/containers-ci.sh).
 */
import { execFile } from 'node:child_process';
import { chmod, cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/free-port.js';
import { ToolClient } from '../../src/client/tool-client.js';
import { createTransport } from '../../src/assembly/create-transport.js';
import type { Transport } from '../../src/transport/transport.js';
import { runCli } from '../support/cli.js';
import { captureLogger } from '../support/harness.js';
import { waitUntil } from '../support/pulsar-app.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TOKEN = `ci-${Date.now().toString(36)}`;
const PROJECT = `toolwire-ci-${process.pid}`;
const SLOW_MS = 300;

let compose: string[];
let env: NodeJS.ProcessEnv;
let configDir: string;
let gateway: string;
let adminUrl: string;

async function composeRun(...args: string[]): Promise<string> {
  const [cmd, ...pre] = compose;
  const r = await run(cmd!, [...pre, '-p', PROJECT, '-f', join(REPO, 'docker-compose.yml'), ...args], { cwd: REPO, env, maxBuffer: 20 * 1024 * 1024 });
  return r.stdout;
}

async function workerContainer(): Promise<string> {
  return (await composeRun('ps', '-q', 'toolwire')).trim();
}

beforeAll(async () => {
  // `docker compose` (the v2 plugin) where it exists, else Debian's docker-compose 1.29: both run the file unchanged.
  compose = await run('docker', ['compose', 'version']).then(
    () => ['docker', 'compose'],
    () => ['docker-compose'],
  );
  configDir = await mkdtemp(join(tmpdir(), 'toolwire-stack-'));
  await cp(join(REPO, 'config'), configDir, { recursive: true });
  // A slow tool on a persistent topic: requests are in flight when the worker is stopped.
  await writeFile(
    join(configDir, 'slow.mjs'),
    `export default async ({ arguments: a }) => { await new Promise((r) => setTimeout(r, ${SLOW_MS})); return 'done ' + a.n; };\n`,
  );
  await writeFile(
    join(configDir, 'tool-service', 'slow-service.json'),
    JSON.stringify({
      id: 'slow-service',
      'request-queue': 'persistent://tg/flow/slow-request',
      'response-queue': 'persistent://tg/response/slow',
      plugin: { kind: 'module', module: './slow.mjs' },
      concurrency: 8,
    }),
  );
  await writeFile(
    join(configDir, 'tool', 'slow.json'),
    JSON.stringify({
      type: 'tool-service',
      name: 'slow',
      description: 'answers after a while',
      service: 'slow-service',
      arguments: [{ name: 'n', type: 'number' }],
    }),
  );
  // The worker runs as uid 1000 and reads the directory through the bind mount.
  await run('chmod', ['-R', 'a+rX', configDir]);
  await chmod(configDir, 0o755);
  const [pulsarPort, webPort, httpPort] = [await freePort(), await freePort(), await freePort()];
  env = {
    ...process.env,
    TOOLWIRE_GATEWAY_TOKEN: TOKEN,
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
});

afterAll(async () => {
  if (compose) await composeRun('down', '-v', '--remove-orphans').catch((err: unknown) => process.stderr.write(`compose down: ${String(err)}\n`));
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

describe('the compose stack, from the host', () => {
  it('runs the worker as a non-root user, healthy by its image HEALTHCHECK', async () => {
    const id = await workerContainer();
    const { stdout } = await run('docker', ['inspect', '--format', '{{.Config.User}} {{.State.Health.Status}}', id]);
    await waitUntil(async () => (await run('docker', ['inspect', '--format', '{{.State.Health.Status}}', id])).stdout.trim() === 'healthy', 60_000, 'healthy');
    expect(stdout.split(' ')[0]).toBe('node');
  });

  it('answers a tool call through the gateway (with its token only) and over the broker', async () => {
    const viaGateway = await runCli(['call', 'tell-joke', '--args', '{"topic":"cats"}', '--url', gateway], { TOOLWIRE_HTTP_TOKEN: 'env:GW', GW: TOKEN });
    expect(viaGateway.code, viaGateway.stderr).toBe(0);
    expect(viaGateway.stdout.length).toBeGreaterThan(10);
    const refused = await runCli(['call', 'tell-joke', '--args', '{}', '--url', gateway]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('401');
    const viaBroker = await runCli(['call', 'calculate', '--args', '{"expression":"(2+3)*4"}', '-T', 'pulsar-ws', '--admin-url', adminUrl]);
    expect(viaBroker.code, viaBroker.stderr).toBe(0);
    expect(viaBroker.stdout.trim()).toBe('20');
  });

  it('loses no request when the worker is stopped with requests in flight (persistent topic)', async () => {
    const { log } = captureLogger('warn');
    const agent: Transport = await createTransport({ kind: 'pulsar-ws', adminUrl, log, ws: { connectTimeoutMs: 15_000 } });
    const client = new ToolClient(agent, log);
    try {
      const N = 120;
      let answered = 0;
      const calls = Array.from({ length: N }, (_, n) =>
        client
          .call({
            requestQueue: 'persistent://tg/flow/slow-request',
            responseQueue: 'persistent://tg/response/slow',
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
      const id = await workerContainer();
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
    }
  });
});
