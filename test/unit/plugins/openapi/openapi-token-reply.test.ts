/**
 * An OAuth2 token endpoint is another party's server: its reply is read once, and a reply of
 * the wrong shape is a clear error naming the field, with neither the token nor the client
 * secret in it. Against a real token endpoint on loopback that answers what the test says.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolwireError, UnauthorizedError } from '../../../../src/errors.js';
import { ClientCredentialsToken, type PostForm } from '../../../../src/plugins/openapi/auth.js';

const CLIENT_SECRET = 'client-s3cret-9d41';
const TOKEN = 'tok-a7f3e2b19c';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** A token endpoint that answers every request with `status` and `body`. */
async function endpoint(status: number, body: string): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-type': 'application/json' }).end(body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/token`;
}

const post: PostForm = async (url, form, headers, signal) => {
  const res = await fetch(url, { method: 'POST', body: form, headers, signal });
  return { status: res.status, text: await res.text() };
};

async function tokenFrom(status: number, body: unknown): Promise<string | ToolwireError> {
  const url = await endpoint(status, typeof body === 'string' ? body : JSON.stringify(body));
  const source = new ClientCredentialsToken(url, 'client', CLIENT_SECRET, [], post, 5_000);
  try {
    return await source.get(new AbortController().signal);
  } catch (err) {
    expect(err).toBeInstanceOf(ToolwireError);
    return err as ToolwireError;
  } finally {
    source.close();
  }
}

function failure(result: string | ToolwireError): ToolwireError {
  if (typeof result === 'string') throw new Error(`expected an error, got the token ${result}`);
  expect(result.message).not.toContain(CLIENT_SECRET);
  expect(result.message).not.toContain(TOKEN);
  return result;
}

describe("an OAuth2 token endpoint's reply", () => {
  it('gives the token of a reply of the right shape, its lifetime as a number or as digits', async () => {
    expect(await tokenFrom(200, { access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 })).toBe(TOKEN);
    expect(await tokenFrom(200, { access_token: TOKEN, token_type: 'bearer', expires_in: '120' })).toBe(TOKEN);
    expect(await tokenFrom(200, { access_token: TOKEN })).toBe(TOKEN);
  });

  it('names the field of a reply of the wrong shape, without the token', async () => {
    const number = failure(await tokenFrom(200, { access_token: 42, expires_in: 3600 }));
    expect(number).toBeInstanceOf(UnauthorizedError);
    expect(number.message).toMatch(/^the OAuth2 token endpoint answered HTTP 200 with a reply toolwire cannot read, at access_token: /);
    const lifetime = failure(await tokenFrom(200, { access_token: TOKEN, expires_in: 'soon' }));
    expect(lifetime.message).toMatch(/at expires_in: /);
    const negative = failure(await tokenFrom(200, { access_token: TOKEN, expires_in: -5 }));
    expect(negative.message).toMatch(/at expires_in: /);
    const list = failure(await tokenFrom(200, [TOKEN]));
    expect(list.message).toMatch(/at \(root\): /);
  });

  it('says a body that is not JSON is not, without quoting it', async () => {
    const html = failure(await tokenFrom(200, `<html>${TOKEN}</html>`));
    expect(html.message).toBe('the OAuth2 token endpoint answered HTTP 200 with a body that is not JSON');
  });

  it('reports a refusal by its error code, with a 200 too, and a server failure as retriable', async () => {
    expect(failure(await tokenFrom(401, { error: 'invalid_client' })).message).toBe(
      "the OAuth2 token endpoint refused this worker's client credentials: invalid_client",
    );
    expect(failure(await tokenFrom(200, { error: 'invalid_scope' })).message).toBe(
      "the OAuth2 token endpoint refused this worker's client credentials: invalid_scope",
    );
    const down = failure(await tokenFrom(503, 'busy'));
    expect([down.code, down.retriable, down.message]).toEqual(['unavailable', true, 'the OAuth2 token endpoint failed: HTTP 503']);
  });
});
