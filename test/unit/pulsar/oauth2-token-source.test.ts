import { generateKeyPairSync, verify } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AbortedError, ConfigError } from '../../../src/errors.js';
import { OAuth2TokenError } from '../../../src/pulsar/oauth2-token-error.js';
import { OAuth2TokenSource, type OAuth2TokenSourceOptions } from '../../../src/pulsar/oauth2-token-source.js';
import { selfSignedCertificate } from '../../support/dual-scheme-server.js';
import { startOidcIssuer, type OidcIssuer, type OidcIssuerOptions } from '../../support/oidc-issuer.js';

const AUDIENCE = 'urn:toolwire:pulsar';
const { privateKey: signingKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

interface Claims {
  readonly sub: string;
  readonly aud: string;
  readonly exp: number;
  readonly jti: string;
  readonly scope?: string;
}

/** The claims of a JWT whose RS256 signature `publicKeyPem` verifies, as the broker checks it. */
function verifiedClaims(jwt: string, publicKeyPem: string): Claims {
  const [header, payload, signature] = jwt.split('.');
  expect(JSON.parse(Buffer.from(header ?? '', 'base64url').toString())).toMatchObject({ alg: 'RS256' });
  expect(verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), publicKeyPem, Buffer.from(signature ?? '', 'base64url'))).toBe(true);
  return JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()) as Claims;
}

/** Poll `probe` until it returns a value other than undefined; fails at the deadline. */
async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, deadlineMs = 20_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('OAuth2TokenSource against a real OAuth2 issuer (oidc-provider)', () => {
  let dir: string;
  let issuer: OidcIssuer | undefined;
  const opened: OAuth2TokenSource[] = [];
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  let logLines: { level: number; msg: string; [field: string]: unknown }[];
  let rawLog: string;
  let log: Logger;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-oauth2-'));
    return () => rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    logLines = [];
    rawLog = '';
    log = pino(
      { level: 'debug' },
      {
        write: (line: string) => {
          rawLog += line;
          logLines.push(JSON.parse(line) as (typeof logLines)[number]);
        },
      },
    );
  });

  afterEach(async () => {
    for (const s of opened.splice(0)) s.close();
    for (const s of sockets) s.destroy();
    sockets.clear();
    for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
    await issuer?.close();
    issuer = undefined;
  });

  async function startIssuer(options: Partial<OidcIssuerOptions> = {}): Promise<OidcIssuer> {
    issuer = await startOidcIssuer({ signingKey, clients: [{ id: 'tool-worker', secret: 'first-secret-1d8e' }], ...options });
    return issuer;
  }

  let files = 0;
  async function credentialsFile(clientId: string, clientSecret: string, path = join(dir, `credentials-${++files}.json`)): Promise<string> {
    await writeFile(path, JSON.stringify({ type: 'client_credentials', client_id: clientId, client_secret: clientSecret }));
    return path;
  }

  function source(options: Partial<OAuth2TokenSourceOptions> & { credentialsFile: string }): OAuth2TokenSource {
    const s = new OAuth2TokenSource({ issuerUrl: issuer?.issuerUrl, audience: AUDIENCE, log, ...options });
    opened.push(s);
    return s;
  }

  /** A TCP port that accepts connections and never answers. */
  async function silentServer(): Promise<number> {
    const server = createServer((socket) => void sockets.add(socket));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  /** A TCP port nobody listens on (just now). */
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('gets a JWT the broker can verify, whose sub is the client id and aud the audience, and keeps it', async () => {
    const { publicKeyPem, tokensIssued } = await startIssuer({ scopes: 'pulsar other' });
    const tokens = source({ credentialsFile: await credentialsFile('tool-worker', 'first-secret-1d8e'), scope: 'pulsar' });

    const first = await tokens.token();
    const claims = verifiedClaims(first, publicKeyPem);
    expect(claims).toMatchObject({ sub: 'tool-worker', aud: AUDIENCE, scope: 'pulsar' });
    expect(await tokens.token()).toBe(first);
    expect(tokensIssued()).toBe(1);
    expect(tokens.description).toContain(issuer?.issuerUrl);
    expect(rawLog).not.toContain(first);
    expect(rawLog).not.toContain('first-secret-1d8e');
  });

  it('asks the issuer once when many callers want a token at the same time', async () => {
    const { tokensIssued } = await startIssuer();
    const tokens = source({ credentialsFile: await credentialsFile('tool-worker', 'first-secret-1d8e') });

    const all = await Promise.all(Array.from({ length: 8 }, () => tokens.token()));
    expect(new Set(all).size).toBe(1);
    expect(tokensIssued()).toBe(1);
  });

  it('renews the token on its own before it expires', async () => {
    const { publicKeyPem, tokensIssued } = await startIssuer({ tokenTtlSeconds: 4 });
    const tokens = source({ credentialsFile: await credentialsFile('tool-worker', 'first-secret-1d8e') });
    const first = verifiedClaims(await tokens.token(), publicKeyPem);

    // Nobody asks: the timer renews it.
    await eventually(() => (tokensIssued() >= 2 ? true : undefined), 'a renewal nobody asked for');
    const renewed = verifiedClaims(await tokens.token(), publicKeyPem);
    expect(renewed.jti).not.toBe(first.jti);
    expect(tokensIssued()).toBe(2);
  }, 30_000);

  it('never hands out an expired token, and no call fails, across several renewals under steady calls', async () => {
    const { publicKeyPem } = await startIssuer({ tokenTtlSeconds: 4 });
    const tokens = source({ credentialsFile: await credentialsFile('tool-worker', 'first-secret-1d8e') });
    const seen = new Set<string>();

    await eventually(
      async () => {
        // A rejection or an expired token ends the test at once.
        const claims = verifiedClaims(await tokens.token(), publicKeyPem);
        const now = Date.now();
        if (claims.exp * 1000 <= now) throw new Error(`token ${claims.jti} was handed out ${now - claims.exp * 1000} ms after it expired`);
        seen.add(claims.jti);
        return seen.size >= 4 ? true : undefined;
      },
      'three renewals',
      25_000,
    );
  }, 30_000);

  it('serves the old token while the issuer fails, rejects retriably once it has expired, and recovers', async () => {
    const { publicKeyPem } = await startIssuer({ tokenTtlSeconds: 4 });
    const tokens = source({ credentialsFile: await credentialsFile('tool-worker', 'first-secret-1d8e'), retry: { initialDelayMs: 100, maxDelayMs: 300 } });
    const old = await tokens.token();
    issuer?.failTokenRequests(503);

    const failure = await eventually(async () => {
      let token: string;
      try {
        token = await tokens.token();
      } catch (err) {
        return err;
      }
      expect(token).toBe(old);
      expect(verifiedClaims(token, publicKeyPem).exp * 1000).toBeGreaterThan(Date.now());
      return undefined;
    }, 'the old token to run out');
    expect(failure).toBeInstanceOf(OAuth2TokenError);
    expect(failure).toMatchObject({ retriable: true, status: 503, clientId: 'tool-worker' });

    issuer?.failTokenRequests(undefined);
    const fresh = await eventually(async () => tokens.token().catch(() => undefined), 'a token after the outage');
    expect(fresh).not.toBe(old);
    // One line when the renewals start failing and one when they work again, not one per retry.
    expect(logLines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['OAuth2 token renewal failed; retrying']);
    expect(logLines.filter((l) => l.level === 30).map((l) => l.msg)).toEqual(['OAuth2 token renewal recovered']);
  }, 30_000);

  it('reads the credentials file again at each request, so a rotated file is used', async () => {
    const { publicKeyPem } = await startIssuer({ tokenTtlSeconds: 4 });
    const path = await credentialsFile('tool-worker', 'first-secret-1d8e');
    const tokens = source({ credentialsFile: path });
    expect(verifiedClaims(await tokens.token(), publicKeyPem).sub).toBe('tool-worker');

    issuer?.registerClient('tool-worker-2', 'second-secret-77c2');
    await credentialsFile('tool-worker-2', 'second-secret-77c2', path);
    await eventually(async () => (verifiedClaims(await tokens.token(), publicKeyPem).sub === 'tool-worker-2' ? true : undefined), 'a token of the new client');
  }, 30_000);

  it('refuses a wrong secret with an error that is not retriable and names the issuer and the client, not the secret', async () => {
    await startIssuer();
    const tokens = source({ credentialsFile: await credentialsFile('tool-worker', 'wrong-secret-5b3f') });

    const err = await tokens.token().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuth2TokenError);
    expect(err).toMatchObject({ retriable: false, status: 401, oauthError: 'invalid_client', clientId: 'tool-worker' });
    const message = (err as Error).message;
    expect(message).toContain(issuer?.issuerUrl);
    expect(message).toContain('"tool-worker"');
    expect(message).toContain('invalid_client');
    expect(message).not.toContain('wrong-secret-5b3f');
    expect(rawLog).not.toContain('wrong-secret-5b3f');
  });

  it('gives a retriable error naming the issuer when it cannot be reached', async () => {
    const port = await closedPort();
    const issuerUrl = `http://127.0.0.1:${port}`;
    const tokens = source({ issuerUrl, credentialsFile: await credentialsFile('tool-worker', 'first-secret-1d8e') });

    const err = await tokens.token().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuth2TokenError);
    expect(err).toMatchObject({ retriable: true, clientId: 'tool-worker', status: undefined });
    expect((err as Error).message).toContain(issuerUrl);
    expect((err as Error).message).toContain('"tool-worker"');
  });

  it('gives a retriable error when the issuer does not answer in time', async () => {
    const port = await silentServer();
    const tokens = source({
      issuerUrl: `http://127.0.0.1:${port}`,
      requestTimeoutMs: 300,
      credentialsFile: await credentialsFile('tool-worker', 'some-secret-0e41'),
    });

    const err = await tokens.token().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuth2TokenError);
    expect(err).toMatchObject({ retriable: true });
    expect((err as Error).message).toContain('did not answer in time');
  });

  it('stops waiting when the caller aborts', async () => {
    const port = await silentServer();
    const tokens = source({ issuerUrl: `http://127.0.0.1:${port}`, credentialsFile: await credentialsFile('tool-worker', 'some-secret-0e41') });
    const controller = new AbortController();

    const pending = tokens.token(controller.signal);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    tokens.close();
    await expect(tokens.token()).rejects.toBeInstanceOf(AbortedError);
  });

  it('refuses an http issuer beyond loopback, and takes https or http on loopback', async () => {
    const credentials = await credentialsFile('tool-worker', 'some-secret-0e41');
    for (const issuerUrl of ['http://idp.example.com', 'http://127.0.0.1.nip.io/', 'http://10.0.0.8:8080/realms/pulsar', 'ftp://idp.example.com']) {
      expect(() => source({ issuerUrl, credentialsFile: credentials }), issuerUrl).toThrow(ConfigError);
    }
    expect(() => source({ issuerUrl: 'http://idp.example.com', credentialsFile: credentials })).toThrow(/must be https/);
    for (const issuerUrl of ['https://idp.example.com', 'http://127.0.0.2:9000', 'http://[::1]:9000', 'http://localhost:9000/realms/x']) {
      expect(source({ issuerUrl, credentialsFile: credentials }).description).toContain(new URL(issuerUrl).host);
    }
  });

  it('names the credentials file when it is missing or not valid, never quoting it', async () => {
    await startIssuer();
    const missing = join(dir, 'nowhere.json');
    await expect(source({ credentialsFile: missing }).token()).rejects.toThrow(ConfigError);
    await expect(source({ credentialsFile: missing }).token()).rejects.toThrow(missing);

    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{"client_id":"tool-worker","client_secret":"broken-secret-9a0c",}');
    const err = await source({ credentialsFile: broken })
      .token()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(broken);
    expect((err as Error).message).not.toContain('broken-secret-9a0c');

    const noSecret = join(dir, 'no-secret.json');
    await writeFile(noSecret, '{"type":"client_credentials","client_id":"tool-worker"}');
    await expect(source({ credentialsFile: noSecret }).token()).rejects.toThrow(/client_secret/);
  });

  it('takes the issuer from the credentials file when none is configured', async () => {
    const { publicKeyPem } = await startIssuer();
    const path = join(dir, 'with-issuer.json');
    await writeFile(
      path,
      JSON.stringify({ type: 'client_credentials', client_id: 'tool-worker', client_secret: 'first-secret-1d8e', issuer_url: issuer?.issuerUrl }),
    );
    const tokens = new OAuth2TokenSource({ credentialsFile: path, audience: AUDIENCE, log });
    opened.push(tokens);
    expect(verifiedClaims(await tokens.token(), publicKeyPem).sub).toBe('tool-worker');
  });

  it('trusts an https issuer through the CA it is given, and not without it', async () => {
    const certificate = await selfSignedCertificate('localhost', dir);
    const { publicKeyPem } = await startIssuer({ tls: { host: 'localhost', cert: certificate.cert, key: certificate.key } });
    expect(issuer?.issuerUrl).toMatch(/^https:\/\/localhost:/);
    const credentials = await credentialsFile('tool-worker', 'first-secret-1d8e');

    const trusting = source({ credentialsFile: credentials, ca: certificate.cert });
    expect(verifiedClaims(await trusting.token(), publicKeyPem).sub).toBe('tool-worker');

    const err = await source({ credentialsFile: credentials })
      .token()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuth2TokenError);
    expect(err).toMatchObject({ retriable: false });
    expect(() => source({ credentialsFile: credentials, ca: 'not a certificate' })).toThrow(ConfigError);

    // An outage seen through the CA's own fetch (undici's package) is still retriable.
    issuer?.failTokenRequests(503);
    const outage = await source({ credentialsFile: credentials, ca: certificate.cert })
      .token()
      .catch((e: unknown) => e);
    expect(outage).toMatchObject({ retriable: true, status: 503 });
  }, 30_000);
});
