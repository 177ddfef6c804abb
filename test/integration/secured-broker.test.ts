/**
 * toolwire against a broker secured as production clusters are (test/support/secured-broker.ts):
 * token authentication with a role per party, authorization by namespace, TLS with a private
 * CA on both ports. The worker is the real CLI process (`toolwire run`) on the suite's
 * transport, told how to get in only through its environment, as an operator would tell it.
 *
 * The broker is this file's own, so its security settings touch no other test.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrokerAccess } from '../../src/assembly/broker-access.js';
import { createTransport } from '../../src/assembly/create-transport.js';
import { ToolClient } from '../../src/client/tool-client.js';
import { DEFAULT_BROKER_TLS } from '../../src/transport/broker-tls.js';
import type { Transport } from '../../src/transport/transport.js';
import { runCli } from '../support/cli.js';
import { serviceDescriptor, toolDescriptor, type ServiceDescriptor, type ToolDescriptor } from '../support/descriptors.js';
import { removeDir, suffix, waitUntil, writeConfigDir } from '../support/pulsar-app.js';
import { startRun, type RunProcess } from '../support/run-process.js';
import { startSecuredBroker, TOKEN_AUDIENCE, type SecuredBroker } from '../support/secured-broker.js';
import { startOidcIssuer } from '../support/oidc-issuer.js';
import { TEST_TRANSPORT } from '../support/transport-under-test.js';
import { interopPython, startConfigService, tgConfigCli } from '../interop/python-fixtures.js';

const WORKER = 'tw-worker';
const AGENT = 'tw-agent';
const log = pino({ level: 'silent' });
const sfx = suffix();

let broker: SecuredBroker;
let scratch: string;
const running: RunProcess[] = [];
const dirs: string[] = [];

/** An echo service on `namespace`'s request topic, answering on tg/response. */
function echoService(id: string, requestNamespace = 'tg/request', kind = 'non-persistent'): { services: ServiceDescriptor[]; tools: ToolDescriptor[] } {
  return {
    services: [
      serviceDescriptor(id, {
        'request-queue': `${kind}://${requestNamespace}/${id}`,
        'response-queue': `${kind}://tg/response/${id}`,
        plugin: { kind: 'module', module: 'builtin:echo' },
      }),
    ],
    // `type` too: the tool is also put into TrustGraph's config service, as TrustGraph writes its tools.
    tools: [toolDescriptor(id, id, { type: 'tool-service', description: 'echo', arguments: [{ name: 'text', type: 'string' }] })],
  };
}

/** The worker's environment: its transport, the broker's TLS URLs, the CA, and how to get a token. */
function workerEnv(credentials: Record<string, string>): NodeJS.ProcessEnv {
  return {
    TOOLWIRE_TRANSPORT: TEST_TRANSPORT,
    PULSAR_URL: broker.pulsarTlsUrl,
    PULSAR_ADMIN_URL: broker.adminTlsUrl,
    PULSAR_TLS_TRUST_CERTS: broker.pki.caFile,
    PULSAR_TOKEN: '',
    PULSAR_ADMIN_TOKEN: '',
    ...credentials,
  };
}

async function worker(configDir: string, credentials: Record<string, string>): Promise<RunProcess> {
  const run = await startRun(configDir, { env: workerEnv(credentials) });
  running.push(run);
  return run;
}

/** An agent with its own role's token, over TLS, on the suite's transport. */
async function agent(): Promise<{ transport: Transport; client: ToolClient }> {
  const access = await openBrokerAccess(
    { token: await broker.token(AGENT), tokenFile: undefined, oauth2: undefined, tls: { ...DEFAULT_BROKER_TLS, trustCertsFile: broker.pki.caFile } },
    log,
  );
  const transport = await createTransport({ kind: TEST_TRANSPORT, serviceUrl: broker.pulsarTlsUrl, adminUrl: broker.adminTlsUrl, access, log });
  return { transport, client: new ToolClient(transport, log) };
}

const call = (client: ToolClient, id: string, text: string, namespace = 'tg/request', kind = 'non-persistent') =>
  client.call({
    requestQueue: `${kind}://${namespace}/${id}`,
    responseQueue: `${kind}://tg/response/${id}`,
    config: {},
    arguments: { text },
    timeoutMs: 20_000,
  });

/** Write a new echo service into a worker's config directory: the worker takes it live. */
async function addService(configDir: string, id: string, requestNamespace?: string): Promise<void> {
  const more = echoService(id, requestNamespace);
  await writeFile(join(configDir, 'tool-service', `${id}.json`), JSON.stringify(more.services[0]));
  await writeFile(join(configDir, 'tool', `${id}.json`), JSON.stringify(more.tools[0]));
}

/** Until the service answers `text` (it may still be opening its subscription). */
const answers = (client: ToolClient, id: string, text: string, what: string, namespace?: string, timeoutMs = 60_000) =>
  waitUntil(async () => (await call(client, id, text, namespace).catch(() => undefined)) === text, timeoutMs, what);

const exited = (run: RunProcess) =>
  new Promise<number | null>((resolve) => (run.child.exitCode !== null ? resolve(run.child.exitCode) : run.child.once('exit', resolve)));

beforeAll(async () => {
  broker = await startSecuredBroker(AbortSignal.timeout(240_000));
  scratch = await mkdtemp(join(tmpdir(), 'toolwire-secured-it-'));
  // As an operator would: the CLI, over TLS, with the superuser's token, granting both roles.
  const out = await runCli(['pulsar', 'bootstrap', '--admin-url', broker.adminTlsUrl, '--worker-role', WORKER, '--agent-role', AGENT], {
    ...process.env,
    PULSAR_ADMIN_TOKEN: broker.adminToken,
    PULSAR_TOKEN: '',
    PULSAR_TLS_TRUST_CERTS: broker.pki.caFile,
  });
  if (out.code !== 0) throw new Error(`pulsar bootstrap failed (${out.code}): ${out.stderr}`);
}, 300_000);

afterAll(async () => {
  for (const run of running) run.child.kill('SIGTERM');
  await Promise.all(running.map(exited));
  for (const d of dirs) await removeDir(d);
  await rm(scratch, { recursive: true, force: true });
  await broker?.stop();
}, 120_000);

describe(`a secured broker (${TEST_TRANSPORT})`, () => {
  it('bootstrap grants each role what it needs on each namespace, and nothing on the others', async () => {
    const permissions = async (ns: string) => {
      const res = await fetch(`${broker.adminUrl}/admin/v2/namespaces/${ns}/permissions`, { headers: { authorization: `Bearer ${broker.adminToken}` } });
      return (await res.json()) as Record<string, string[]>;
    };
    const sorted = (p: Record<string, string[]>) => Object.fromEntries(Object.entries(p).map(([role, actions]) => [role, [...actions].sort()]));
    expect(sorted(await permissions('tg/request'))).toEqual({ [WORKER]: ['consume', 'produce'], [AGENT]: ['produce'] });
    expect(sorted(await permissions('tg/response'))).toEqual({ [WORKER]: ['consume', 'produce'], [AGENT]: ['consume'] });
    expect(sorted(await permissions('tg/flow'))).toEqual({ [WORKER]: ['consume'] });
    expect(await permissions('tg/notify')).toEqual({});
  });

  it("serves an agent over TLS, each with its own role's token, while the worker's token file is rotated and old tokens expire", async () => {
    const first = `sec-a-${sfx}`;
    const second = `sec-b-${sfx}`;
    const configDir = await writeConfigDir(echoService(first));
    dirs.push(configDir);
    const tokenFile = join(scratch, 'worker.token');
    // Short-lived, as a rotating issuer's are: the first one has expired long before the end.
    const TTL_S = 6;
    await writeFile(tokenFile, await broker.token(WORKER, TTL_S));
    const firstExpires = Date.now() + TTL_S * 1000;
    const run = await worker(configDir, { PULSAR_TOKEN_FILE: tokenFile });
    const { transport, client } = await agent();
    try {
      let rotations = 0;
      const rotate = setInterval(() => {
        broker
          .token(WORKER, TTL_S)
          .then((t) => writeFile(tokenFile, t))
          .then(
            () => rotations++,
            (err: unknown) => process.stderr.write(`[secured-broker] a rotation failed: ${String(err)}\n`),
          );
      }, 2_000);
      let sent = 0;
      let answered = 0;
      try {
        // Steady calls until the first token is well past its expiry and several rotations are done.
        while (Date.now() < firstExpires + 4_000 || rotations < 4) {
          sent++;
          expect(await call(client, first, `n${sent}`)).toBe(`n${sent}`);
          answered++;
        }
        // A new service now: its subscription and producer are new connections, which the broker
        // lets in only with a token that has not expired, so the worker must dial with the current one.
        await addService(configDir, second);
        await answers(client, second, 'fresh', 'the service added after the first token expired answers');
        for (let i = 0; i < 20; i++) {
          sent++;
          expect(await call(client, first, `m${i}`)).toBe(`m${i}`);
          answered++;
        }
      } finally {
        clearInterval(rotate);
      }
      process.stderr.write(`[secured-broker] ${sent} calls sent, ${answered} answered across ${rotations} token rotations (${TEST_TRANSPORT})\n`);
      expect(answered).toBe(sent);
      expect(rotations).toBeGreaterThanOrEqual(4);
      expect(run.stderr()).not.toContain(broker.adminToken);
    } finally {
      await client.close();
      await transport.close();
    }
  });

  it('gets, and renews before they expire, OAuth2 client-credentials tokens the broker accepts, losing no call at a renewal', async () => {
    const id = `sec-h-${sfx}`;
    const later = `sec-i-${sfx}`;
    const TTL_S = 6;
    // The issuer signs with the key the broker trusts: its tokens are the broker's tokens.
    const issuer = await startOidcIssuer({ signingKey: broker.signingKey, tokenTtlSeconds: TTL_S, clients: [{ id: WORKER, secret: 'worker-client-secret' }] });
    try {
      const credentialsFile = join(scratch, 'oauth2-credentials.json');
      await writeFile(credentialsFile, JSON.stringify({ type: 'client_credentials', client_id: WORKER, client_secret: 'worker-client-secret' }));
      const configDir = await writeConfigDir(echoService(id));
      dirs.push(configDir);
      const run = await worker(configDir, {
        PULSAR_OAUTH2_ISSUER_URL: issuer.issuerUrl,
        PULSAR_OAUTH2_AUDIENCE: TOKEN_AUDIENCE,
        PULSAR_OAUTH2_CREDENTIALS_FILE: credentialsFile,
      });
      const firstExpires = Date.now() + TTL_S * 1000;
      const { transport, client } = await agent();
      let sent = 0;
      let answered = 0;
      try {
        while (Date.now() < firstExpires + 2_000 || issuer.tokensIssued() < 4) {
          sent++;
          expect(await call(client, id, `o${sent}`)).toBe(`o${sent}`);
          answered++;
        }
        // New connections after the first token expired: let in only with a renewed one.
        await addService(configDir, later);
        await answers(client, later, 'renewed', 'the service added after the first token expired answers');
      } finally {
        await client.close();
        await transport.close();
      }
      process.stderr.write(
        `[secured-broker] OAuth2: ${sent} calls sent, ${answered} answered across ${issuer.tokensIssued()} tokens issued (${TEST_TRANSPORT})\n`,
      );
      expect(answered).toBe(sent);
      expect(issuer.tokensIssued()).toBeGreaterThanOrEqual(4);
      expect(run.stderr()).not.toContain('worker-client-secret');
    } finally {
      await issuer.close();
    }
  });

  it("follows TrustGraph's config service on the secured broker, the service on TrustGraph's own client with a token of its role", async () => {
    const python = await interopPython();
    const topic = `cfg-${sfx}`;
    const id = `sec-j-${sfx}`;
    // TrustGraph's config service is a role of its own (its permissions are TrustGraph's business,
    // not this test's: it reads and writes on all three of its namespaces).
    for (const ns of ['tg/request', 'tg/response', 'tg/notify']) await broker.admin.grantNamespacePermission(ns, 'tg-config', ['consume', 'produce']);
    // The worker's role reads the config service's pushes only when bootstrap is told so.
    const out = await runCli(['pulsar', 'bootstrap', '--admin-url', broker.adminTlsUrl, '--worker-role', WORKER, '--trustgraph-config'], {
      ...process.env,
      PULSAR_ADMIN_TOKEN: broker.adminToken,
      PULSAR_TOKEN: '',
      PULSAR_TLS_TRUST_CERTS: broker.pki.caFile,
    });
    expect(out.code, out.stderr).toBe(0);
    const GATEWAY = `gw-${sfx}`;
    const svc = await startConfigService({ python, pulsarUrl: broker.pulsarUrl, pulsarApiKey: await broker.token('tg-config'), gatewayToken: GATEWAY, topic });
    try {
      const queues = {
        TOOLWIRE_CONFIG_SOURCE: 'trustgraph',
        TOOLWIRE_CONFIG_REQUEST_QUEUE: `request:tg:${topic}`,
        TOOLWIRE_CONFIG_RESPONSE_QUEUE: `response:tg:${topic}`,
        TOOLWIRE_CONFIG_PUSH_QUEUE: `notify:tg:${topic}`,
      };
      const emptyDir = await writeConfigDir({});
      dirs.push(emptyDir);
      await worker(emptyDir, { PULSAR_TOKEN: await broker.token(WORKER), ...queues });
      const { services, tools } = echoService(id);
      const put = (type: string, key: string, value: unknown) =>
        tgConfigCli(python, 'tg-put-config-item', ['-u', svc.gatewayUrl!, '-t', GATEWAY, '--type', type, '--key', key, '--value', JSON.stringify(value)]);
      expect((await put('tool-service', id, services[0])).code).toBe(0);
      expect((await put('tool', id, tools[0])).code).toBe(0);
      const { transport, client } = await agent();
      try {
        await answers(client, id, 'configured', 'the tool put into TrustGraph answers');
      } finally {
        await client.close();
        await transport.close();
      }
    } finally {
      await svc.stop();
    }
  });

  it('refuses a worker whose token the broker does not accept, at start, in words that say what to check', async () => {
    const configDir = await writeConfigDir(echoService(`sec-c-${sfx}`));
    dirs.push(configDir);
    // Signed by a key the broker does not know.
    const { signToken } = await import('../support/secured-broker.js');
    const { generateKeyPairSync } = await import('node:crypto');
    const stranger = await signToken(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, WORKER);
    const err = (await worker(configDir, { PULSAR_TOKEN: stranger }).then(
      () => new Error('the worker started'),
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(/not authenticated/);
    expect(err.message).toMatch(/PULSAR_TOKEN/);
    expect(err.message).not.toContain(stranger);
  });

  it("refuses a worker that does not trust the broker's CA, naming the setting to fix", async () => {
    const configDir = await writeConfigDir(echoService(`sec-d-${sfx}`));
    dirs.push(configDir);
    const err = (await worker(configDir, { PULSAR_TOKEN: await broker.token(WORKER), PULSAR_TLS_TRUST_CERTS: '' }).then(
      () => new Error('the worker started'),
      (e: unknown) => e,
    )) as Error;
    expect(err.message).toMatch(/not signed by a trusted CA/);
    expect(err.message).toMatch(/PULSAR_TLS_TRUST_CERTS/);
  });

  it('serves persistent request and response topics too, each party on its own role over TLS', async () => {
    const id = `sec-k-${sfx}`;
    const configDir = await writeConfigDir(echoService(id, 'tg/request', 'persistent'));
    dirs.push(configDir);
    await worker(configDir, { PULSAR_TOKEN: await broker.token(WORKER) });
    const { transport, client } = await agent();
    try {
      for (let i = 0; i < 20; i++) expect(await call(client, id, `p${i}`, 'tg/request', 'persistent')).toBe(`p${i}`);
    } finally {
      await client.close();
      await transport.close();
    }
  });

  it('takes a client certificate as the role it names (Pulsar TLS authentication)', async () => {
    const id = `sec-e-${sfx}`;
    const configDir = await writeConfigDir(echoService(id));
    dirs.push(configDir);
    const cert = await broker.pki.client(WORKER);
    await worker(configDir, { PULSAR_TLS_CERT_FILE: cert.certFile, PULSAR_TLS_KEY_FILE: cert.keyFile });
    const { transport, client } = await agent();
    try {
      expect(await call(client, id, 'by certificate')).toBe('by certificate');
    } finally {
      await client.close();
      await transport.close();
    }
  });

  it('refuses a live change its role may not consume with a backoff, keeps serving, and takes it once the permission is granted', async () => {
    const served = `sec-f-${sfx}`;
    const denied = `sec-g-${sfx}`;
    const privateNs = `tg/private-${sfx}`;
    await broker.admin.createNamespace(privateNs);
    // The agent may publish there from the start: what is missing is the worker's permission.
    await broker.admin.grantNamespacePermission(privateNs, AGENT, ['produce']);
    const configDir = await writeConfigDir(echoService(served));
    dirs.push(configDir);
    const run = await worker(configDir, { PULSAR_TOKEN: await broker.token(WORKER), LOG_LEVEL: 'info' });
    const { transport, client } = await agent();
    try {
      expect(await call(client, served, 'before')).toBe('before');
      await addService(configDir, denied, privateNs);
      // Refused: readiness names the topic and the 403, and counts the attempts.
      const config = async () =>
        ((await (await fetch(`${run.base}/readyz?detail`)).json()) as { config: { reloads: { failed: number }; rejected?: { problems: string[] } } }).config;
      await waitUntil(async () => (await config()).rejected !== undefined, 60_000, '/readyz reports the refused change');
      const problem = (await config()).rejected!.problems.join(' ');
      expect(problem).toMatch(/403/);
      expect(problem).toContain(privateNs);
      expect(problem).toMatch(/consume/);
      // Tried again on a growing backoff (2 s, 4 s, 8 s...), the served tool answering all the while.
      let i = 0;
      await waitUntil(
        async () => {
          i++;
          expect(await call(client, served, `during ${i}`)).toBe(`during ${i}`);
          return (await config()).reloads.failed >= 3;
        },
        120_000,
        'three attempts on the backoff',
        1_000,
      );
      // One error line when it started failing, not one per attempt.
      await waitUntil(() => run.stderr().includes('config change could not be applied'), 10_000, 'the refusal is said');
      expect(run.stderr().match(/config change could not be applied/g)).toHaveLength(1);
      const lines = run
        .stderr()
        .split('\n')
        .filter((l) => l.includes(privateNs)).length;
      process.stderr.write(
        `[secured-broker] refused change: ${(await config()).reloads.failed} attempts, ${lines} log lines naming ${privateNs}, ${i} calls served meanwhile\n`,
      );
      // No cancel subscription where the role may not read.
      const cancels = await broker.admin.topicStats(`non-persistent://${privateNs}/toolwire-cancel`);
      expect(Object.keys(cancels?.subscriptions ?? {})).toEqual([]);
      // The operator grants it: picked up within the backoff, and said once.
      await broker.admin.grantNamespacePermission(privateNs, WORKER, ['consume']);
      await answers(client, denied, 'granted', 'the change is applied once the permission is there', privateNs, 90_000);
      await waitUntil(() => run.stderr().includes('config change applied after failed attempts'), 10_000, 'the recovery is said');
    } finally {
      await client.close();
      await transport.close();
    }
  }, 240_000);
});
