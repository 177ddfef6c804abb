/**
 * An HTTP API as tools, end to end on the real broker: the Swagger Petstore document (from
 * @readme/oas-examples on npm) imported with `toolwire openapi import`, served by a worker
 * on both topic kinds, each tool calling a local Petstore implementation over HTTP.
 */
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient, ToolResponseError } from '../../src/client/tool-client.js';
import type { Transport } from '../../src/transport/transport.js';
import { runCli } from '../support/cli.js';
import { captureLogger } from '../support/harness.js';
import { startPetstore, type Petstore } from '../support/petstore.js';
import { brokerTransport, deleteTopic, removeDir, startPulsarApp, suffix } from '../support/pulsar-app.js';

const adminUrl = inject('pulsarAdminUrl');
const PETSTORE_DOC = createRequire(import.meta.url).resolve('@readme/oas-examples/3.0/json/petstore.json');
const API_KEY = 'special-key-for-tests';
const tag = suffix();
const KINDS = ['persistent', 'non-persistent'] as const;
const queues = (kind: string) => ({ request: `${kind}://tg/request/petstore-${kind}-${tag}`, response: `${kind}://tg/response/petstore-${kind}-${tag}` });

let petstore: Petstore;
let configDir: string | undefined;
let app: App | undefined;
let agent: Transport | undefined;
let client: ToolClient;

beforeAll(async () => {
  petstore = await startPetstore(API_KEY);
  const { log } = captureLogger('warn');
  configDir = await mkdtemp(join(tmpdir(), 'toolwire-petstore-'));
  for (const kind of KINDS) {
    const q = queues(kind);
    const r = await runCli([
      'openapi',
      'import',
      '--service',
      `petstore-${kind}`,
      '--server',
      petstore.url,
      '--allow-private',
      '--secret-ref',
      'env:PETSTORE_API_KEY',
      '--prefix',
      `${kind}-`,
      '--request-queue',
      q.request,
      '--response-queue',
      q.response,
      '--out',
      configDir,
      PETSTORE_DOC,
    ]);
    expect(r.code, r.stderr).toBe(0);
  }
  app = await startPulsarApp({ adminUrl, configDir, log, secretEnv: { PETSTORE_API_KEY: API_KEY } });
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await app?.stop();
  await petstore?.close();
  await removeDir(configDir);
  for (const kind of KINDS) for (const t of Object.values(queues(kind))) await deleteTopic(adminUrl, t).catch(() => undefined);
});

describe.each(KINDS)('the Petstore over Pulsar, %s topics', (kind) => {
  const call = (tool: string, args: Record<string, unknown>) => {
    const q = queues(kind);
    // A TrustGraph agent names the tool by its config value: the operation.
    return client.call({ requestQueue: q.request, responseQueue: q.response, config: { operation: tool }, arguments: args, timeoutMs: 30_000 });
  };

  it('reads a pet by id, with the API key from the worker secrets', async () => {
    expect(JSON.parse(await call('getPetById', { petId: 1 }))).toMatchObject({ id: 1, name: 'Rex', category: { name: 'dogs' } });
  });

  it('adds a pet from JSON arguments, finds it by status, renames it with a form, uploads a file, deletes it', async () => {
    const added = JSON.parse(
      await call('addPet', { name: `Tom-${kind}`, photoUrls: ['https://x/1.png'], status: 'pending', category: { id: 2, name: 'cats' } }),
    ) as { id: number };
    expect(petstore.pets.get(added.id)).toMatchObject({ name: `Tom-${kind}`, status: 'pending', category: { name: 'cats' } });
    const found = JSON.parse(await call('findPetsByStatus', { status: ['pending'] })) as { id: number }[];
    expect(found.map((p) => p.id)).toContain(added.id);
    await call('updatePetWithForm', { petId: added.id, name: `Tommy-${kind}` });
    expect(petstore.pets.get(added.id)?.name).toBe(`Tommy-${kind}`);
    expect(JSON.parse(await call('uploadFile', { petId: added.id, file: 'not really a png' }))).toMatchObject({
      message: `uploaded 16 bytes for Tommy-${kind}`,
    });
    await call('deletePet', { petId: added.id });
    expect(petstore.pets.has(added.id)).toBe(false);
  });

  it("answers the API's own error for a missing pet", async () => {
    const err = await call('getPetById', { petId: 999_999 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolResponseError);
    expect(err).toMatchObject({ type: 'tool-service-error', message: 'HTTP 404 Not Found: Pet not found' });
  });
});
