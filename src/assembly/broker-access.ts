import { readFileSync } from 'node:fs';
import { rootCertificates, type ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import type { PulsarAuth } from '../settings.js';
import { DEFAULT_BROKER_TLS, customTls, nodeTlsOptions, type BrokerTls } from '../transport/broker-tls.js';
import { FileTokenSource } from '../transport/file-token-source.js';
import { fixedTokens, type TokenSource } from '../transport/token-source.js';
import { brokerFetch } from '../pulsar/tls-fetch.js';
import type { PulsarAdminOptions } from '../pulsar/admin-client.js';

/**
 * Everything a connection to the broker needs to be let in, made once per process from the
 * settings: the token source every transport and admin call asks, and the TLS options in the
 * forms each client takes (paths for libpulsar, Node options for WebSocket, a fetch for admin).
 */
export interface BrokerAccess {
  /** none, token, token-file or oauth2, for the start line. */
  readonly method: string;
  readonly tokens: TokenSource | undefined;
  readonly tls: BrokerTls;
  /** Node's TLS options for `wss://`; undefined when Node's defaults do. */
  readonly wsTls: ConnectionOptions | undefined;
  /** Options for a PulsarAdminClient on the same broker. */
  admin(): Promise<Pick<PulsarAdminOptions, 'tokens' | 'fetch'>>;
  close(): void;
}

export async function openBrokerAccess(auth: PulsarAuth, log: Logger): Promise<BrokerAccess> {
  const tokens = await tokenSource(auth, log);
  const wsTls = customTls(auth.tls) ? nodeTlsOptions(auth.tls, rootCertificates) : undefined;
  if (auth.tls.allowInsecure) log.warn({ component: 'transport' }, "PULSAR_TLS_ALLOW_INSECURE: the broker's certificate is not checked; for a lab only");
  let fetcher: Promise<typeof fetch> | undefined;
  return {
    method: auth.oauth2 ? 'oauth2' : auth.tokenFile ? 'token-file' : auth.token ? 'token' : 'none',
    tokens,
    tls: auth.tls,
    wsTls,
    async admin() {
      fetcher ??= brokerFetch(auth.tls);
      return { tokens, fetch: await fetcher };
    },
    close: () => tokens?.close(),
  };
}

/** Access with a token given in full and Node's TLS defaults: the bench's agents and tests. */
export function tokenAccess(token: string, log: Logger): Promise<BrokerAccess> {
  return openBrokerAccess({ token, tokenFile: undefined, oauth2: undefined, tls: DEFAULT_BROKER_TLS }, log);
}

async function tokenSource(auth: PulsarAuth, log: Logger): Promise<TokenSource | undefined> {
  if (auth.token) return fixedTokens(auth.token, 'PULSAR_TOKEN');
  if (auth.tokenFile) return new FileTokenSource(auth.tokenFile);
  if (auth.oauth2) {
    // Loaded only where OAuth2 is asked for: its library has no business in other workers.
    const { OAuth2TokenSource } = await import('../pulsar/oauth2-token-source.js');
    const o = auth.oauth2;
    return new OAuth2TokenSource({
      issuerUrl: o.issuerUrl,
      credentialsFile: o.credentialsFile,
      ...(o.audience !== undefined ? { audience: o.audience } : {}),
      ...(o.scope !== undefined ? { scope: o.scope } : {}),
      // A platform's private CA signs its identity provider's certificate as often as its brokers'.
      ...(auth.tls.trustCertsFile !== undefined ? { ca: readFileSync(auth.tls.trustCertsFile, 'utf8') } : {}),
      log: log.child({ component: 'oauth2' }),
    });
  }
  return undefined;
}
