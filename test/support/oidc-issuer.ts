/**
 * A real OAuth2 / OpenID Connect issuer in this process (panva's oidc-provider), for the
 * client-credentials grant Pulsar's OAuth2 clients use: discovery at
 * `/.well-known/openid-configuration`, a token endpoint that takes the client's id and secret
 * in the form body (client_secret_post, as Pulsar's clients send them), and JWT access tokens
 * (RS256) signed with the key the test hands in, so a broker given `publicKeyPem` verifies
 * them, and static role tokens signed with that key verify alike.
 *
 * oidc-provider 8.x: 9.x warns at import that it wants Node 22 LTS or later, and toolwire
 * runs on 20.18+.
 */
import { createPublicKey, KeyObject, type JsonWebKey } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import Provider, { type Adapter, type AdapterPayload, type ClientMetadata, type Configuration } from 'oidc-provider';

export interface OidcIssuerOptions {
  /** The RSA private key that signs the access tokens (a KeyObject, or a private JWK). */
  readonly signingKey: KeyObject | JsonWebKey;
  /** The `kid` of that key in the issuer's JWKS; default `toolwire-test`. */
  readonly kid?: string;
  /** Lifetime of an access token; default 300 s. Short ones (5-20 s) make refresh tests quick. */
  readonly tokenTtlSeconds?: number;
  /** Clients known from the start; more with `registerClient`. */
  readonly clients?: readonly { readonly id: string; readonly secret: string }[];
  /** The scopes a token may carry (space-separated); default `pulsar`. Others asked for are dropped. */
  readonly scopes?: string;
  /** Serve https with this certificate, on its host name (`localhost`); http on 127.0.0.1 otherwise. */
  readonly tls?: { readonly host: string; readonly cert: string; readonly key: string };
}

export interface OidcIssuer {
  /** `http://127.0.0.1:<port>` (or `https://<tls.host>:<port>`), no trailing slash. */
  readonly issuerUrl: string;
  /** The signing key's public half, SPKI PEM (Pulsar's `tokenPublicKey`). */
  readonly publicKeyPem: string;
  /** Add a client, or give an existing one a new secret (the old one stops working). */
  registerClient(id: string, secret: string): void;
  /** Access tokens issued so far. */
  readonly tokensIssued: () => number;
  /** While set, the token endpoint answers this HTTP status (a 503 is an issuer outage); undefined lifts it. */
  failTokenRequests(status: number | undefined): void;
  close(): Promise<void>;
}

function clientMetadata(id: string, secret: string): ClientMetadata {
  return {
    client_id: id,
    client_secret: secret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_post',
  };
}

/** Everything oidc-provider stores, in a map; `Client` entries are the registered clients. */
function memoryAdapter(store: Map<string, AdapterPayload>): new (name: string) => Adapter {
  return class MemoryAdapter implements Adapter {
    constructor(private readonly name: string) {}
    private key(id: string): string {
      return `${this.name}:${id}`;
    }
    async upsert(id: string, payload: AdapterPayload): Promise<void> {
      store.set(this.key(id), payload);
    }
    async find(id: string): Promise<AdapterPayload | undefined> {
      return store.get(this.key(id));
    }
    async findByUserCode(): Promise<undefined> {
      return undefined;
    }
    async findByUid(): Promise<undefined> {
      return undefined;
    }
    async consume(id: string): Promise<void> {
      const payload = store.get(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string): Promise<void> {
      store.delete(this.key(id));
    }
    async revokeByGrantId(): Promise<void> {}
  };
}

export async function startOidcIssuer(options: OidcIssuerOptions): Promise<OidcIssuer> {
  const kid = options.kid ?? 'toolwire-test';
  const privateKey = options.signingKey instanceof KeyObject ? options.signingKey.export({ format: 'jwk' }) : options.signingKey;
  if (privateKey.kty !== 'RSA' || privateKey.d === undefined) throw new Error('startOidcIssuer: signingKey must be an RSA private key');
  const publicKeyPem = createPublicKey({ key: privateKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  const ttl = options.tokenTtlSeconds ?? 300;
  const scopes = options.scopes ?? 'pulsar';

  const store = new Map<string, AdapterPayload>();
  const register = (id: string, secret: string): void => void store.set(`Client:${id}`, { ...clientMetadata(id, secret) });
  for (const c of options.clients ?? []) register(c.id, c.secret);

  let failStatus: number | undefined;
  let issued = 0;
  // The provider's handler is added once the port, and so the issuer URL, is known.
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }) : createHttpServer();
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // On the certificate's host name, so a client resolving it dials the address listened on.
    server.listen(0, options.tls?.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const issuerUrl = options.tls ? `https://${options.tls.host}:${port}` : `http://127.0.0.1:${port}`;

  const configuration: Configuration = {
    adapter: memoryAdapter(store),
    jwks: { keys: [{ ...privateKey, kid, alg: 'RS256', use: 'sig' }] },
    // Cookies serve the interactive flows only; fixed keys keep oidc-provider from warning.
    cookies: { keys: ['toolwire-test-cookie-key'] },
    // The resource server's accessTokenTTL rules a token with an audience; this one, one without.
    ttl: { ClientCredentials: ttl },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Pulsar's OAuth2 clients (Java, C++, Python, Go) send the audience as an `audience`
        // form parameter, the Auth0 convention; oidc-provider knows RFC 8707's `resource`.
        // When a request has no `resource`, its `audience` is taken as one, so either form
        // works and a token carries `aud` = the audience asked for. The token endpoint
        // drops parameters it does not know from `ctx.oidc.params`, so it is read from the
        // parsed body. (oidc-provider insists that a resource is an absolute URI:
        // `urn:pulsar:broker`, `https://broker.example/`.)
        defaultResource: (ctx) => {
          const body = (ctx.oidc as unknown as { body?: Record<string, unknown> }).body;
          const audience = body?.['audience'];
          return typeof audience === 'string' && audience !== '' ? audience : (undefined as unknown as string);
        },
        // Every audience is a resource server whose tokens are JWTs signed RS256 with the given key.
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: scopes,
          audience: resourceIndicator,
          accessTokenTTL: ttl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256', kid } },
        }),
      },
    },
    // A client-credentials JWT has no account; oidc-provider sets `sub` to the client id
    // then (formats/jwt.js: `sub: accountId || clientId`), which is the role Pulsar takes.
    // Set here again so that a change upstream breaks this fixture, not a broker test.
    formats: {
      customizers: {
        jwt: (_ctx, token, jwt) => {
          if ('clientId' in token && typeof token.clientId === 'string' && !('accountId' in token && token.accountId)) jwt.payload.sub = token.clientId;
          return jwt;
        },
      },
    },
  };
  const provider = new Provider(issuerUrl, configuration);
  provider.on('grant.success', () => void issued++);
  // Errors answered to clients (wrong secret...) are emitted too; the tests read them from the responses.
  provider.on('server_error', () => undefined);
  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (failStatus !== undefined && req.method === 'POST' && req.url?.startsWith('/token')) {
      res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('the test made the issuer fail');
      return;
    }
    void callback(req, res);
  });

  return {
    issuerUrl,
    publicKeyPem,
    registerClient: register,
    tokensIssued: () => issued,
    failTokenRequests: (status) => void (failStatus = status),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
