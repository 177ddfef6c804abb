import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ConfigError, errorMessage } from '../errors.js';

/**
 * How the worker checks the broker's certificate and shows its own, for `pulsar+ssl://`,
 * `https://` and `wss://`. Paths, as Pulsar's own clients take them (the native client reads
 * the files itself).
 */
export interface BrokerTls {
  /** PEM file of the CA(s) to trust besides the system's: a private CA. */
  readonly trustCertsFile?: string | undefined;
  /** A client certificate and its key (PEM), for Pulsar's TLS authentication. */
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
  /** Accept any certificate: for a lab only, and said at start. */
  readonly allowInsecure: boolean;
  /** Check that the certificate names the host dialled; on unless turned off. */
  readonly validateHostname: boolean;
}

export const DEFAULT_BROKER_TLS: BrokerTls = { allowInsecure: false, validateHostname: true };

/** True when something differs from Node's defaults: then the connections need options of their own. */
export function customTls(tls: BrokerTls): boolean {
  return tls.trustCertsFile !== undefined || tls.certFile !== undefined || tls.allowInsecure || !tls.validateHostname;
}

function readPem(setting: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`${setting}: cannot read ${path}: ${errorMessage(err)}`], { cause: err });
  }
}

/**
 * Node's TLS options for the WebSocket and admin connections. The extra CA is added to the
 * system's, not put in their place: a broker behind a public CA keeps working when a private
 * one is named for another hop.
 */
export function nodeTlsOptions(tls: BrokerTls, systemCas: readonly string[]): ConnectionOptions {
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new ConfigError(['PULSAR_TLS_CERT_FILE and PULSAR_TLS_KEY_FILE go together: a client certificate needs its key']);
  }
  return {
    ...(tls.trustCertsFile !== undefined ? { ca: [...systemCas, readPem('PULSAR_TLS_TRUST_CERTS', tls.trustCertsFile)] } : {}),
    ...(tls.certFile !== undefined ? { cert: readPem('PULSAR_TLS_CERT_FILE', tls.certFile) } : {}),
    ...(tls.keyFile !== undefined ? { key: readPem('PULSAR_TLS_KEY_FILE', tls.keyFile) } : {}),
    rejectUnauthorized: !tls.allowInsecure,
    ...(tls.validateHostname ? {} : { checkServerIdentity: () => undefined }),
  };
}

const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/** The first `code` on an error or its causes (undici wraps the socket's error). */
function codeOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * What to do about a certificate the worker refused, in words an operator can act on;
 * undefined when `err` is not about a certificate.
 */
export function certificateProblem(err: unknown, url: string): string | undefined {
  const code = codeOf(err);
  if (code === undefined) return undefined;
  if (UNTRUSTED.has(code)) {
    return `the certificate of ${url} is not signed by a trusted CA (${code}): set PULSAR_TLS_TRUST_CERTS to the PEM file of the CA that signed it`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `the certificate of ${url} does not name that host (${code}): connect by a name the certificate holds, or have it reissued`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return `the certificate of ${url} is outside its validity period (${code})`;
  }
  return undefined;
}
