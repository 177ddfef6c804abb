/**
 * A private CA made for one test run, as a platform team's would be: a root, a broker
 * certificate for 127.0.0.1, and client certificates for Pulsar's TLS authentication. The
 * secured tests use it (test/support re-exports it) and so does the cluster drill. Made
 * with the openssl command (Debian's openssl, which ca-certificates depends on); keys are
 * PKCS#8 PEM, which both Node and the broker's Java read.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PemFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TestPki {
  /** The CA's certificate, PEM: what a client is told to trust. */
  readonly caFile: string;
  /** The broker's certificate (SAN IP 127.0.0.1 and DNS localhost) and key. */
  readonly server: PemFiles;
  /** A client certificate whose subject CN is `cn` (the role Pulsar's TLS authentication gives it). */
  client(cn: string): Promise<PemFiles>;
  /** A server certificate for these subjectAltName entries (`DNS:x`, `IP:y`) only. */
  serverFor(file: string, altNames: string): Promise<PemFiles>;
}

const openssl = (dir: string, args: string[]) => run('openssl', args, { cwd: dir });

export async function makeTestPki(dir: string): Promise<TestPki> {
  const caFile = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  await openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', caKey]);
  await openssl(dir, [
    'req',
    '-x509',
    '-new',
    '-key',
    caKey,
    '-subj',
    '/CN=toolwire test CA',
    '-days',
    '2',
    '-out',
    caFile,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);

  const leaf = async (name: string, cn: string, ext: string): Promise<PemFiles> => {
    const keyFile = join(dir, `${name}.key`);
    const certFile = join(dir, `${name}.pem`);
    const csr = join(dir, `${name}.csr`);
    const extFile = join(dir, `${name}.ext`);
    await openssl(dir, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', keyFile]);
    await openssl(dir, ['req', '-new', '-key', keyFile, '-subj', `/CN=${cn}`, '-out', csr]);
    await writeFile(extFile, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyAgreement\n${ext}\n`);
    await openssl(dir, ['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-days', '2', '-extfile', extFile, '-out', certFile]);
    return { certFile, keyFile };
  };

  const server = await leaf('broker', '127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth');
  return {
    caFile,
    server,
    client: (cn) => leaf(`client-${cn}`, cn, 'extendedKeyUsage=clientAuth'),
    serverFor: (file, altNames) => leaf(file, 'server', `subjectAltName=${altNames}\nextendedKeyUsage=serverAuth`),
  };
}
