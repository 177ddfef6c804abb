import { ConfigError, TransportError } from '../errors.js';
import { topicPath } from './topic-name.js';
import { NOT_AUTHENTICATED, notAuthorized } from './broker-refusal.js';

/**
 * Addresses of Pulsar's WebSocket API and the errors its HTTP upgrade answers with.
 * The token is never part of these URLs: it travels in the upgrade's Authorization header.
 */
export type WsRole = 'consumer' | 'producer';

/** `http://h:8080`, `https://...`, `ws://...` or `wss://...` -> `ws(s)://h:8080` without a trailing slash. */
export function webSocketBase(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    throw new ConfigError([`pulsar-ws url "${url}" is not a URL; expected http(s)://host:8080 or ws(s)://host:8080`], { cause: err });
  }
  const scheme = { 'http:': 'ws:', 'ws:': 'ws:', 'https:': 'wss:', 'wss:': 'wss:' }[u.protocol];
  if (!scheme) {
    throw new ConfigError([`pulsar-ws url "${url}" has scheme ${u.protocol}; expected http(s):// or ws(s):// (the broker's web port, 8080 by default)`]);
  }
  u.protocol = scheme;
  return u.toString().replace(/\/+$/, '');
}

/** The endpoint URL without credentials; undefined query values are left out. */
export function endpointUrl(
  base: string,
  role: WsRole,
  topic: string,
  subscription: string | undefined,
  query: Readonly<Record<string, string | number | undefined>>,
): string {
  let path = `${base}/ws/v2/${role}/${topicPath(topic)}`;
  if (subscription !== undefined) path += `/${encodeURIComponent(subscription)}`;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

const ENTITIES: Readonly<Record<string, string>> = { '&quot;': '"', '&amp;': '&', '&lt;': '<', '&gt;': '>', '&#39;': "'" };

/** Jetty answers a refused upgrade with an HTML page whose title carries the reason. */
export function upgradeReason(body: string): string {
  const title = /<title>([\s\S]*?)<\/title>/i.exec(body)?.[1] ?? body;
  return title
    .replace(/&(quot|amp|lt|gt|#39);/g, (entity) => ENTITIES[entity] ?? entity)
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 500);
}

/**
 * A refused upgrade as a TransportError naming the topic. 4xx are settings or permission
 * problems (not retriable), except 409 (an exclusive consumer or producer name still
 * connected) which clears when the other side leaves; 5xx are broker trouble (retriable).
 */
export function upgradeError(status: number, body: string, role: WsRole, topic: string, subscription?: string): UpgradeRefusedError {
  const what = subscription === undefined ? `${role} for ${topic}` : `${role} for ${topic} (subscription ${subscription})`;
  const reason = upgradeReason(body);
  const hint =
    status === 400
      ? 'invalid parameters'
      : status === 401
        ? NOT_AUTHENTICATED
        : status === 403
          ? notAuthorized(role === 'consumer' ? 'consume' : 'produce', topic)
          : status === 404
            ? 'tenant, namespace or topic not found'
            : status === 409
              ? 'busy: an exclusive consumer or a producer of that name is already connected'
              : status >= 500
                ? 'the broker failed to create it'
                : 'refused';
  const retriable = status === 409 || status >= 500;
  return new UpgradeRefusedError(status, `pulsar-ws: cannot open ${what}: HTTP ${status} ${hint}${reason ? ` (${reason})` : ''}`, retriable);
}

/** The broker answered the HTTP upgrade with an error status. */
export class UpgradeRefusedError extends TransportError {
  constructor(
    readonly status: number,
    message: string,
    retriable: boolean,
  ) {
    super(message, { retriable });
  }
}
