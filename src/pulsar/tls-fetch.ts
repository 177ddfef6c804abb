import { rootCertificates } from 'node:tls';
import { customTls, nodeTlsOptions, type BrokerTls } from '../transport/broker-tls.js';

/**
 * A fetch for the broker's admin API that checks its certificate as `tls` says (a private CA,
 * a client certificate); Node's own fetch when `tls` asks nothing beyond the defaults, so
 * undici's package is loaded only where it is needed.
 */
export async function brokerFetch(tls: BrokerTls): Promise<typeof fetch> {
  if (!customTls(tls)) return fetch;
  const options = nodeTlsOptions(tls, rootCertificates);
  const undici = await import('undici');
  const dispatcher = new undici.Agent({ connect: options });
  // undici's fetch and Node's take the same arguments; their types differ only in name.
  return ((input: string, init?: RequestInit) => undici.fetch(input, { ...(init as Parameters<typeof undici.fetch>[1]), dispatcher })) as typeof fetch;
}
