import { generateKeyPairSync } from 'node:crypto';
import { chmod, chown, copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { makeTestPki } from '../test-pki.js';

/** The roles of the secured cluster: the superuser (the brokers' own client, the drill's admin calls), a worker's and an agent's. */
export const CLUSTER_ROLES = { admin: 'drill-admin', worker: 'drill-worker', agent: 'drill-agent' } as const;
/** The brokers' tokenAudience (bench/drills/cluster/docker-compose.yml). */
export const CLUSTER_TOKEN_AUDIENCE = 'urn:toolwire:drill-cluster';
/** The user the Pulsar image runs as: the brokers read the mounted files as it. */
const PULSAR_UID = 10000;

export interface ClusterSecrets {
  /** The directory the brokers mount at /pulsar/drill-secrets (TOOLWIRE_CLUSTER_SECRETS). */
  readonly brokerDir: string;
  /** The run's CA (PEM), on the host: what the drill's clients trust. */
  readonly caFile: string;
  /** A token for each role, valid for the day. */
  readonly tokens: Readonly<Record<keyof typeof CLUSTER_ROLES, string>>;
  remove(): Promise<void>;
}

/**
 * Keys made for one run of the secured cluster: a CA and a broker certificate for 127.0.0.1
 * (bench/test-pki.ts), an RS256 key pair whose public half the brokers check tokens with, and a
 * token for each role. The brokers get only what they need (certificate and key, the CA, the
 * public key, the superuser's token for their own client), in a directory of its own; the CA's
 * and the signing key stay on the host. Deleted after the run.
 */
export async function makeClusterSecrets(): Promise<ClusterSecrets> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-cluster-drill-'));
  try {
    const pkiDir = join(dir, 'pki');
    const brokerDir = join(dir, 'broker');
    await mkdir(pkiDir);
    await mkdir(brokerDir);
    const pki = await makeTestPki(pkiDir);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const sign = (role: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'RS256' })
        .setSubject(role)
        .setAudience(CLUSTER_TOKEN_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('24h')
        .sign(privateKey);
    const tokens = { admin: await sign(CLUSTER_ROLES.admin), worker: await sign(CLUSTER_ROLES.worker), agent: await sign(CLUSTER_ROLES.agent) };
    // The names bench/drills/cluster/docker-compose.yml gives the brokers.
    await copyFile(pki.caFile, join(brokerDir, 'ca.pem'));
    await copyFile(pki.server.certFile, join(brokerDir, 'broker.pem'));
    await copyFile(pki.server.keyFile, join(brokerDir, 'broker.key'));
    await writeFile(join(brokerDir, 'token-public.der'), publicKey.export({ type: 'spki', format: 'der' }));
    await writeFile(join(brokerDir, 'admin.token'), tokens.admin, { mode: 0o600 });
    await readableByBrokers(brokerDir);
    return { brokerDir, caFile: pki.caFile, tokens, remove: () => rm(dir, { recursive: true, force: true }) };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Give the files to the image's user, as root can; otherwise (a user in the docker group) make
 * them readable by all: keys of one run on loopback ports, deleted when it ends.
 */
async function readableByBrokers(dir: string): Promise<void> {
  const files = (await readdir(dir)).map((f) => join(dir, f));
  try {
    for (const p of [dir, ...files]) await chown(p, PULSAR_UID, 0);
  } catch {
    await chmod(dir, 0o755);
    for (const f of files) await chmod(f, 0o644);
  }
}
