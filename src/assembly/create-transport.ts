import type { Logger } from 'pino';
import { ConfigError, errorMessage } from '../errors.js';
import { MemoryTransport } from '../transport/memory-transport.js';
import type { ModuleImporter } from '../transport/pulsar-native-client.js';
import { PulsarNativeTransport, type PulsarNativeTransportSettings } from '../transport/pulsar-native-transport.js';
import { PulsarWsTransport, type PulsarWsTransportSettings } from '../transport/pulsar-ws-transport.js';
import type { Transport } from '../transport/transport.js';
import { adminUrlOf, resolveBrokerUrls, serviceUrlOf } from '../transport/broker-urls.js';
import type { SubscriptionAdmin } from '../transport/pulsar-ws-consumer.js';
import { webSocketBase } from '../transport/pulsar-ws-endpoint.js';
import { PulsarAdminClient } from '../pulsar/admin-client.js';
import type { BrokerAccess } from './broker-access.js';

/** Tuning passed through to the transport that is chosen (see each settings type). */
export type PulsarWsOptions = Omit<PulsarWsTransportSettings, 'kind' | 'url' | 'tokens' | 'tls' | 'log' | 'admin'>;
export type PulsarNativeOptions = Omit<PulsarNativeTransportSettings, 'kind' | 'serviceUrl' | 'tokens' | 'tls' | 'log' | 'importer'>;

export interface PulsarSettings {
  readonly kind: 'pulsar' | 'pulsar-ws' | 'auto';
  /** Binary protocol: `pulsar://host:6650` or `pulsar+ssl://host:6651` (native client). */
  readonly serviceUrl?: string;
  /** Web port: `http://host:8080` or `https://host:8443` (WebSocket API and admin REST). */
  readonly adminUrl?: string;
  /** Credentials and TLS (assembly/broker-access.ts); none: an open broker. */
  readonly access?: BrokerAccess;
  readonly log: Logger;
  readonly ws?: PulsarWsOptions;
  readonly native?: PulsarNativeOptions;
  /** For tests: how `pulsar-client` is imported. */
  readonly importer?: ModuleImporter;
}

export type TransportSettings = { readonly kind: 'memory'; readonly log?: Logger } | PulsarSettings;

/**
 * The composition root's one way to make a Transport.
 * - `memory`: in-process (tests, single-process setups).
 * - `pulsar`: the native client; throws ConfigError naming `pulsar-ws` when `pulsar-client`
 *   is not installed.
 * - `pulsar-ws`: the broker's WebSocket API (pure JS) on the web/admin URL.
 * - `auto`: native when `pulsar-client` loads, otherwise WebSocket (logged at info).
 */
export async function createTransport(settings: TransportSettings): Promise<Transport> {
  switch (settings.kind) {
    case 'memory':
      return new MemoryTransport();
    case 'pulsar':
      return PulsarNativeTransport.create(nativeSettings(settings, serviceUrlOf(settings.serviceUrl, settings.adminUrl)));
    case 'pulsar-ws':
      return new PulsarWsTransport(wsSettings(settings, adminUrlOf(settings.serviceUrl, settings.adminUrl)));
    case 'auto': {
      // Both checked up front: a URL mistake should not hide behind the fallback.
      const urls = resolveBrokerUrls(settings.serviceUrl, settings.adminUrl);
      try {
        return await PulsarNativeTransport.create(nativeSettings(settings, urls.serviceUrl));
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        settings.log.info(
          { component: 'transport', reason: errorMessage(err), url: urls.adminUrl },
          'native pulsar-client unavailable; using the WebSocket API',
        );
        return new PulsarWsTransport(wsSettings(settings, urls.adminUrl));
      }
    }
  }
}

function nativeSettings(pulsar: PulsarSettings, serviceUrl: string): PulsarNativeTransportSettings {
  return { ...pulsar.native, kind: 'pulsar', serviceUrl, tokens: pulsar.access?.tokens, tls: pulsar.access?.tls, log: pulsar.log, importer: pulsar.importer };
}

function wsSettings(pulsar: PulsarSettings, adminUrl: string): PulsarWsTransportSettings {
  const access = pulsar.access;
  return {
    ...pulsar.ws,
    kind: 'pulsar-ws',
    url: adminUrl,
    tokens: access?.tokens,
    tls: access?.wsTls,
    log: pulsar.log,
    admin: subscriptionAdmin(adminUrl, access),
  };
}

/**
 * The admin call the WebSocket consumer needs, on the web port it already uses (the admin
 * API answers there: ws(s)://h:p is http(s)://h:p). The client is made at the call, so a
 * transport that never subscribes at earliest never parses the URL for it.
 */
export function subscriptionAdmin(url: string, access: BrokerAccess | undefined): SubscriptionAdmin {
  return {
    async createSubscriptionAtEarliest(topic, subscription, signal) {
      const http = webSocketBase(url).replace(/^ws(s?):\/\//, 'http$1://');
      return new PulsarAdminClient(http, access ? await access.admin() : {}).createSubscriptionAtEarliest(topic, subscription, signal);
    },
  };
}
