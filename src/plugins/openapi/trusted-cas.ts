import { readFile } from 'node:fs/promises';
import { createSecureContext, rootCertificates } from 'node:tls';
import { ConfigError, errorMessage } from '../../errors.js';

/** The worker setting naming a PEM file of CAs the openapi plugin trusts besides Node's bundled ones. */
export const OPENAPI_CA_FILE = 'OPENAPI_CA_FILE';

/**
 * The CAs TLS trusts for HTTP APIs: Node's bundled ones and those of `OPENAPI_CA_FILE` (an
 * API behind a private CA); undefined when the setting is unset, which leaves Node's default
 * (with NODE_EXTRA_CA_CERTS). The worker's own setting, never a descriptor's: a config writer
 * who could add a CA could vouch for any host. Throws ConfigError when the file cannot be read
 * or holds no certificate TLS accepts.
 */
export async function trustedCas(settings: Readonly<Record<string, string | undefined>>): Promise<readonly string[] | undefined> {
  const path = settings[OPENAPI_CA_FILE]?.trim();
  if (!path) return undefined;
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate in it');
    // Parsed now, so a broken file is a problem at load time rather than at each connection.
    createSecureContext({ ca: pem });
  } catch (err) {
    throw new ConfigError([`setting ${OPENAPI_CA_FILE}: cannot use ${path}: ${errorMessage(err)}`]);
  }
  return [...rootCertificates, pem];
}
