import { ConfigError } from '../errors.js';

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
