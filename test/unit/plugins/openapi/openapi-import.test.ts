/**
 * `toolwire openapi import` on well-known documents from @readme/oas-examples (npm): the
 * Swagger Petstore in 2.0, 3.0 and 3.1 (YAML), security schemes, and a server over HTTP.
 */
import { createServer } from 'node:http';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../support/cli.js';

const require = createRequire(import.meta.url);
const example = (p: string) => require.resolve(`@readme/oas-examples/${p}`);
const dirs: string[] = [];

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

type Doc = { 'tool-service': Record<string, unknown>; tools: Record<string, unknown>[] };

async function imported(args: string[]): Promise<Doc & { stderr: string }> {
  const r = await runCli(['openapi', 'import', ...args]);
  expect(r.code, r.stderr).toBe(0);
  return { ...(JSON.parse(r.stdout) as Doc), stderr: r.stderr };
}

function tool(doc: Doc, name: string): Record<string, unknown> {
  const t = doc.tools.find((x) => x['name'] === name);
  expect(t, name).toBeDefined();
  return t!;
}

// The CLI in process: the first test loads the import command's module graph and parses three
// documents, CPU work that took over 12 s on a loaded machine.
describe('toolwire openapi import', { timeout: 60_000 }, () => {
  it('makes one tool per Petstore operation, the same from Swagger 2.0, OpenAPI 3.0 and 3.1 YAML', async () => {
    const docs = await Promise.all(
      ['2.0/json/petstore.json', '3.0/json/petstore.json', '3.1/yaml/petstore.yaml'].map((p) => imported(['--service', 'pets', example(p)])),
    );
    for (const d of docs) {
      expect(d.tools).toHaveLength(20);
      expect(d['tool-service']).toMatchObject({
        id: 'pets',
        'config-params': [{ name: 'operation', required: true }],
        plugin: { kind: 'openapi', server: expect.stringMatching(/^https?:\/\/petstore\.swagger\.io\/v2$/) },
      });
      const get = tool(d, 'getPetById');
      expect(get).toMatchObject({
        service: 'pets',
        operation: 'getPetById',
        description: 'Returns a single pet',
        'plugin-options': { method: 'get', path: '/pet/{petId}', parameters: [{ argument: 'petId', name: 'petId', in: 'path' }] },
      });
      expect(get['arguments']).toEqual([{ name: 'petId', required: true, description: 'ID of pet to return', type: 'number' }]);
      // The API key is the service's auth: the model is never asked for it.
      const del = tool(d, 'deletePet');
      expect((del['arguments'] as { name: string }[]).map((a) => a.name)).toEqual(['petId']);
      const add = tool(d, 'addPet');
      const args = add['arguments'] as Record<string, unknown>[];
      expect(args.find((a) => a['name'] === 'name')).toMatchObject({ type: 'string', required: true });
      expect(args.find((a) => a['name'] === 'status')).toMatchObject({ type: 'select', options: ['available', 'pending', 'sold'] });
      // Nested objects keep their schema, with every $ref resolved.
      const category = args.find((a) => a['name'] === 'category')!;
      expect(category).toMatchObject({ type: 'object', input_schema: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } } });
      expect(JSON.stringify(args)).not.toContain('$ref');
      expect(add['plugin-options']).toMatchObject({ method: 'post', path: '/pet', body: { 'media-type': 'application/json' } });
      expect(tool(d, 'updatePetWithForm')['plugin-options']).toMatchObject({ body: { 'media-type': 'application/x-www-form-urlencoded' } });
    }
    // The 3.1 Petstore uploads the image as the raw body; the older ones as a multipart field.
    expect(tool(docs[0]!, 'uploadFile')['plugin-options']).toMatchObject({ body: { 'media-type': 'multipart/form-data' } });
    expect(tool(docs[2]!, 'uploadFile')['plugin-options']).toMatchObject({ body: { 'media-type': 'application/octet-stream', argument: 'body' } });
    // The security scheme becomes the service's auth, its secret a reference the operator sets.
    expect(docs[1]!['tool-service']['plugin']).toMatchObject({
      auth: { type: 'api-key', in: 'header', name: 'api_key', prefix: 'custom', value: 'env:PETS_API_KEY' },
    });
    expect(docs[1]!.stderr).toContain('security scheme petstore_auth: type oauth2 is not supported');
  });

  it('picks operations by operationId or tag, and writes descriptor files', async () => {
    const out = await mkdtemp(join(tmpdir(), 'toolwire-openapi-import-'));
    dirs.push(out);
    const r = await runCli([
      'openapi',
      'import',
      '--service',
      'pets',
      '--include',
      'store,getPetById',
      '--exclude',
      'deleteOrder',
      '--prefix',
      'pets_',
      '--out',
      out,
      example('3.0/json/petstore.json'),
    ]);
    expect(r.code).toBe(0);
    expect((await readdir(join(out, 'tool'))).sort()).toEqual([
      'pets_getInventory.json',
      'pets_getOrderById.json',
      'pets_getPetById.json',
      'pets_placeOrder.json',
    ]);
    const service = JSON.parse(await readFile(join(out, 'tool-service', 'pets.json'), 'utf8')) as Record<string, unknown>;
    expect(service['request-queue']).toBe('non-persistent://tg/request/pets');
    const v = await runCli(['validate', '--static', out]);
    expect(v.stderr + v.stdout).toContain('OK');
  });

  it('maps each supported security scheme, with --security and --secret-ref', async () => {
    const doc = example('3.0/json/security.json');
    const auth = async (scheme: string) =>
      (
        (await imported(['--service', 's', '--security', scheme, '--secret-ref', 'file:s', '--server', 'https://api.example', doc]))['tool-service'][
          'plugin'
        ] as Record<string, unknown>
      )['auth'];
    expect(await auth('basic')).toEqual({ type: 'basic', username: 'env:S_USERNAME', password: 'file:s' });
    expect(await auth('bearer')).toEqual({ type: 'api-key', in: 'header', name: 'Authorization', prefix: 'bearer', value: 'file:s' });
    expect(await auth('apiKey_query')).toEqual({ type: 'api-key', in: 'query', name: 'apiKey', value: 'file:s' });
    const r = await runCli(['openapi', 'import', '--service', 's', '--security', 'apiKey_cookie', doc]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('an API key in a cookie is not supported');
  });

  it('reads a document from a URL and resolves a relative server against it', async () => {
    const body = await readFile(example('3.0/json/petstore.json'), 'utf8');
    const relative = JSON.stringify({ ...(JSON.parse(body) as object), servers: [{ url: '/api/v3' }] });
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(relative));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.json`;
      const d = await imported(['--service', 'pets', '--include', 'getPetById', url]);
      expect((d['tool-service']['plugin'] as Record<string, unknown>)['server']).toBe(url.replace('/openapi.json', '/api/v3'));
    } finally {
      server.close();
    }
  });

  it('leaves validate to say what a worker would refuse: a tool without its operation, an unresolved secret, a private server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwire-openapi-validate-'));
    dirs.push(dir);
    await mkdir(join(dir, 'tool-service'));
    await mkdir(join(dir, 'tool'));
    const service = {
      id: 'api',
      'request-queue': 'non-persistent://tg/request/api',
      'response-queue': 'non-persistent://tg/response/api',
      plugin: { kind: 'openapi', server: 'http://10.1.2.3/v1', auth: { type: 'api-key', value: 'env:API_TOKEN_NOT_SET' } },
    };
    await writeFile(join(dir, 'tool-service', 'api.json'), JSON.stringify(service));
    await writeFile(join(dir, 'tool', 'ping.json'), JSON.stringify({ name: 'ping', service: 'api' }));
    const bare = await runCli(['validate', dir]);
    expect(bare.code).toBe(1);
    expect(bare.stdout + bare.stderr).toContain('tool/ping.json: plugin-options.path: Invalid input: expected string');
    await writeFile(join(dir, 'tool', 'ping.json'), JSON.stringify({ name: 'ping', service: 'api', 'plugin-options': { method: 'get', path: '/ping' } }));
    const r = await runCli(['validate', dir]);
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    expect(out).toContain('plugin.auth.value: the secret reference env:API_TOKEN_NOT_SET does not resolve on this worker');
    expect(out).toContain('plugin.server: 10.1.2.3 is a private address, which is not allowed (see allow-private)');
  });

  it('says what is wrong with its input', async () => {
    expect((await runCli(['openapi', 'import', example('3.0/json/petstore.json')])).stderr).toContain('--service is required');
    const missing = await runCli(['openapi', 'import', '--service', 's', '/nonexistent/api.yaml']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('/nonexistent/api.yaml: not a readable OpenAPI document');
    const relative = await runCli(['openapi', 'import', '--service', 's', '--server', 'ftp://x', example('3.0/json/petstore.json')]);
    expect(relative.stderr).toContain('no absolute server URL');
  });
});
