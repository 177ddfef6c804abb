import type { Logger } from 'pino';
import { ConfigError, errorMessage } from '../errors.js';
import { MemoryTransport } from './memory-transport.js';
import type { ModuleImporter } from './pulsar-native-client.js';
import { PulsarNativeTransport, type PulsarNativeTransportSettings } from './pulsar-native-transport.js';
import { PulsarWsTransport, type PulsarWsTransportSettings } from './pulsar-ws-transport.js';
import type { Transport } from './transport.js';

export const TransportKind = {
  Memory: 'memory',
  Pulsar: 'pulsar',
  PulsarWs: 'pulsar-ws',
  Auto: 'auto',
} as const;
export type TransportKind = (typeof TransportKind)[keyof typeof TransportKind];

/** Tuning passed through to the transport that is chosen (see each settings type). */
export type PulsarWsOptions = Omit<PulsarWsTransportSettings, 'kind' | 'url' | 'token' | 'log'>;
export type PulsarNativeOptions = Omit<PulsarNativeTransportSettings, 'kind' | 'serviceUrl' | 'token' | 'log' | 'importer'>;

export interface PulsarSettings {
  readonly kind: 'pulsar' | 'pulsar-ws' | 'auto';
  /** Binary protocol: `pulsar://host:6650` or `pulsar+ssl://host:6651` (native client). */
  readonly serviceUrl?: string;
  /** Web port: `http://host:8080` or `https://host:8443` (WebSocket API and admin REST). */
  readonly adminUrl?: string;
  readonly token?: string;
  readonly log: Logger;
  readonly ws?: PulsarWsOptions;
  readonly native?: PulsarNativeOptions;
  /** For tests: how `pulsar-client` is imported. */
  readonly importer?: ModuleImporter;
}

export type TransportSettings = { readonly kind: 'memory'; readonly log?: Logger } | PulsarSettings;

export interface BrokerUrls {
  readonly serviceUrl: string;
  readonly adminUrl: string;
}

const SERVICE_TO_WEB: Readonly<Record<string, { scheme: string; port: string; webPort: string; webScheme: string }>> = {
  'pulsar:': { scheme: 'pulsar:', port: '6650', webScheme: 'http:', webPort: '8080' },
  'pulsar+ssl:': { scheme: 'pulsar+ssl:', port: '6651', webScheme: 'https:', webPort: '8443' },
};
const WEB_TO_SERVICE: Readonly<Record<string, { port: string; serviceScheme: string; servicePort: string }>> = {
  'http:': { port: '8080', serviceScheme: 'pulsar:', servicePort: '6650' },
  'ws:': { port: '8080', serviceScheme: 'pulsar:', servicePort: '6650' },
  'https:': { port: '8443', serviceScheme: 'pulsar+ssl:', servicePort: '6651' },
  'wss:': { port: '8443', serviceScheme: 'pulsar+ssl:', servicePort: '6651' },
};

function parseUrl(url: string, field: string): URL {
  try {
    return new URL(url);
  } catch (err) {
    throw new ConfigError([`${field} "${url}" is not a URL`], { cause: err });
  }
}

/**
 * Both broker addresses from whichever were given. When only one is given the other is the
 * same host on Pulsar's standard port for the same security:
 *   pulsar://h[:6650]      <-> http://h:8080   (ws:// counts as http://)
 *   pulsar+ssl://h[:6651]  <-> https://h:8443  (wss:// counts as https://)
 * A non-standard port cannot be mapped (the other port is anyone's guess), so deriving from
 * one is a ConfigError asking for both URLs; so is giving neither. Each transport derives
 * only the URL it uses, so `pulsar-ws` behind a proxy on :443 needs just `adminUrl`.
 */
export function resolveBrokerUrls(serviceUrl: string | undefined, adminUrl: string | undefined): BrokerUrls {
  return { serviceUrl: serviceUrlOf(serviceUrl, adminUrl), adminUrl: adminUrlOf(serviceUrl, adminUrl) };
}

/** The binary-protocol URL: given, or derived from adminUrl (see resolveBrokerUrls). */
export function serviceUrlOf(serviceUrl: string | undefined, adminUrl: string | undefined): string {
  if (serviceUrl) return serviceUrl;
  if (!adminUrl) throw neither();
  const u = parseUrl(adminUrl, 'adminUrl');
  const m = WEB_TO_SERVICE[u.protocol];
  if (!m) throw new ConfigError([`adminUrl "${adminUrl}" must start with http(s):// or ws(s)://`]);
  // URL drops a scheme's default port (80/443), which is no Pulsar web port either.
  if (u.port !== m.port) {
    throw new ConfigError([`adminUrl "${adminUrl}" uses a non-standard port, so the broker service URL cannot be derived from it; set serviceUrl too`]);
  }
  return `${m.serviceScheme}//${u.hostname}:${m.servicePort}`;
}

/** The web/admin URL: given, or derived from serviceUrl (see resolveBrokerUrls). */
export function adminUrlOf(serviceUrl: string | undefined, adminUrl: string | undefined): string {
  if (adminUrl) return adminUrl;
  if (!serviceUrl) throw neither();
  const u = parseUrl(serviceUrl, 'serviceUrl');
  const m = SERVICE_TO_WEB[u.protocol];
  if (!m) throw new ConfigError([`serviceUrl "${serviceUrl}" must start with pulsar:// or pulsar+ssl://`]);
  if (u.port !== '' && u.port !== m.port) {
    throw new ConfigError([`serviceUrl "${serviceUrl}" uses a non-standard port, so the web/admin URL cannot be derived from it; set adminUrl too`]);
  }
  // hostname keeps the brackets of an IPv6 address.
  return `${m.webScheme}//${u.hostname}:${m.webPort}`;
}

function neither(): ConfigError {
  return new ConfigError(['a Pulsar transport needs serviceUrl (pulsar://host:6650) or adminUrl (http://host:8080), or both']);
}

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
        settings.log.info({ component: 'transport', reason: errorMessage(err), url: urls.adminUrl }, 'native pulsar-client unavailable; using the WebSocket API');
        return new PulsarWsTransport(wsSettings(settings, urls.adminUrl));
      }
    }
  }
}

function nativeSettings(s: PulsarSettings, serviceUrl: string): PulsarNativeTransportSettings {
  return { ...s.native, kind: 'pulsar', serviceUrl, token: s.token, log: s.log, importer: s.importer };
}

function wsSettings(s: PulsarSettings, adminUrl: string): PulsarWsTransportSettings {
  return { ...s.ws, kind: 'pulsar-ws', url: adminUrl, token: s.token, log: s.log };
}
