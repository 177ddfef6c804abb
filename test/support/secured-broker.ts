/**
 * A Pulsar standalone of a test's own, secured as production clusters are: token
 * authentication (RS256, so an OAuth2 issuer holding the same key mints tokens it accepts),
 * TLS client certificates as a second way in, authorization with a superuser, TLS on both
 * ports with a private CA, and a short authentication refresh check so that expired tokens
 * are found within seconds.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { OwnBroker } from '../../bench/own-broker.js';
import { freePort } from '../../bench/free-port.js';
import { PulsarAdminClient } from '../../src/pulsar/admin-client.js';
import { makeTestPki, type TestPki } from './test-pki.js';

export const TOKEN_AUDIENCE = 'urn:toolwire:test-broker';
export const SUPERUSER = 'admin';

export interface SecuredBroker {
  /** The plain ports (token authentication still required). */
  readonly pulsarUrl: string;
  readonly adminUrl: string;
  /** The TLS ports: pulsar+ssl:// and https:// (wss:// for the WebSocket API). */
  readonly pulsarTlsUrl: string;
  readonly adminTlsUrl: string;
  readonly pki: TestPki;
  /** The key every accepted token is signed with (RS256): hand it to an OAuth2 issuer. */
  readonly signingKey: KeyObject;
  readonly dir: string;
  /** A token for `role`, valid `ttlSeconds` (default an hour), for this broker's audience. */
  token(role: string, ttlSeconds?: number): Promise<string>;
  /** An admin client with the superuser's token, on the plain web port. */
  readonly admin: PulsarAdminClient;
  readonly adminToken: string;
  stop(): Promise<void>;
}

export async function signToken(key: KeyObject, role: string, ttlSeconds = 3600, audience = TOKEN_AUDIENCE): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'RS256' })
    .setSubject(role)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(key);
}

export async function startSecuredBroker(signal: AbortSignal, onStderr?: (s: string) => void): Promise<SecuredBroker> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-secured-'));
  try {
    const pki = await makeTestPki(dir);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicKeyFile = join(dir, 'token-public.der');
    await writeFile(publicKeyFile, publicKey.export({ type: 'spki', format: 'der' }));
    const adminToken = await signToken(privateKey, SUPERUSER, 24 * 3600);
    const adminTokenFile = join(dir, 'admin.token');
    await writeFile(adminTokenFile, adminToken);
    const tlsPort = await freePort();
    const webTlsPort = await freePort();
    const conf = [
      'authenticationEnabled=true',
      'authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken,org.apache.pulsar.broker.authentication.AuthenticationProviderTls',
      `tokenPublicKey=file://${publicKeyFile}`,
      'tokenPublicAlg=RS256',
      `tokenAudience=${TOKEN_AUDIENCE}`,
      // Expired tokens are looked for every 2 s: a rotation test sees what production sees, sooner.
      'authenticationRefreshCheckSeconds=2',
      'authorizationEnabled=true',
      `superUserRoles=${SUPERUSER}`,
      // The broker's own client (the WebSocket service's, the standalone's set-up).
      'brokerClientAuthenticationPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken',
      `brokerClientAuthenticationParameters=file://${adminTokenFile}`,
      `brokerServicePortTls=${tlsPort}`,
      `webServicePortTls=${webTlsPort}`,
      `tlsCertificateFilePath=${pki.server.certFile}`,
      `tlsKeyFilePath=${pki.server.keyFile}`,
      `tlsTrustCertsFilePath=${pki.caFile}`,
      'tlsAllowInsecureConnection=false',
      'tlsRequireTrustedClientCertOnConnect=false',
    ].join('\n');
    const broker = await OwnBroker.start(signal, onStderr, conf, adminToken);
    return {
      pulsarUrl: broker.endpoints.pulsarUrl,
      adminUrl: broker.endpoints.adminUrl,
      pulsarTlsUrl: `pulsar+ssl://127.0.0.1:${tlsPort}`,
      adminTlsUrl: `https://127.0.0.1:${webTlsPort}`,
      pki,
      signingKey: privateKey,
      dir,
      token: (role, ttlSeconds) => signToken(privateKey, role, ttlSeconds),
      admin: new PulsarAdminClient(broker.endpoints.adminUrl, { token: adminToken }),
      adminToken,
      async stop() {
        await broker.destroy();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
