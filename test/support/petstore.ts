/**
 * A local implementation of the Swagger Petstore (the document @readme/oas-examples ships as
 * 3.0/json/petstore.json), enough of it to call the imported tools: pets by id and status,
 * add, update with a form, upload an image (multipart), delete with the API key.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Pet {
  id: number;
  name: string;
  photoUrls: string[];
  status?: string;
  category?: { id?: number; name?: string };
  tags?: { id?: number; name?: string }[];
}

export interface Petstore {
  readonly url: string;
  readonly pets: Map<number, Pet>;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

export async function startPetstore(apiKey: string): Promise<Petstore> {
  const pets = new Map<number, Pet>([[1, { id: 1, name: 'Rex', photoUrls: [], status: 'available', category: { id: 1, name: 'dogs' } }]]);
  let nextId = 100;
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://petstore');
      const parts = url.pathname.replace(/^\/v2\//, '').split('/');
      const text = await body(req);
      if (req.headers['api_key'] !== apiKey) return send(res, 401, { code: 401, type: 'error', message: 'bad api_key' });
      if (parts[0] !== 'pet') return send(res, 404, { code: 404, type: 'error', message: `no route ${url.pathname}` });
      if (parts[1] === 'findByStatus' && req.method === 'GET') {
        const wanted = url.searchParams.getAll('status');
        return send(
          res,
          200,
          [...pets.values()].filter((p) => wanted.includes(p.status ?? '')),
        );
      }
      if (parts.length === 1 && req.method === 'POST') {
        if (req.headers['content-type'] !== 'application/json') return send(res, 415, { code: 415, type: 'error', message: 'json only' });
        const pet = JSON.parse(text) as Pet;
        if (typeof pet.name !== 'string' || !Array.isArray(pet.photoUrls)) return send(res, 405, { code: 405, type: 'error', message: 'Invalid input' });
        pet.id = nextId++;
        pets.set(pet.id, pet);
        return send(res, 200, pet);
      }
      const id = Number(parts[1]);
      const pet = pets.get(id);
      if (!Number.isInteger(id)) return send(res, 400, { code: 400, type: 'error', message: 'Invalid ID supplied' });
      if (!pet) return send(res, 404, { code: 404, type: 'error', message: 'Pet not found' });
      if (parts[2] === 'uploadImage' && req.method === 'POST') {
        const file = /name="file"[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n([^\r]*)\r\n/.exec(text)?.[1];
        return send(res, 200, { code: 200, type: 'unknown', message: `uploaded ${file?.length ?? 0} bytes for ${pet.name}` });
      }
      if (req.method === 'GET') return send(res, 200, pet);
      if (req.method === 'POST') {
        const form = new URLSearchParams(text);
        if (form.has('name')) pet.name = form.get('name')!;
        if (form.has('status')) pet.status = form.get('status')!;
        return send(res, 200, { code: 200, type: 'unknown', message: String(id) });
      }
      if (req.method === 'DELETE') {
        pets.delete(id);
        return send(res, 200, { code: 200, type: 'unknown', message: String(id) });
      }
      return send(res, 405, { code: 405, type: 'error', message: 'method not allowed' });
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`,
    pets,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
