import { ConfigError } from '../errors.js';

/**
 * Topic names as descriptors give them: full Pulsar names, or TrustGraph's short form
 * `class:topicspace:topic` (request/response/notify are non-persistent, flow is persistent).
 * The topic may hold colons: TrustGraph 2.x names a flow's queues `text-completion:<workspace>:<flow>`
 * (trustgraph-base 2.11.1 AsyncPulsarBackend._map_topic splits on the first two colons only).
 */
export interface TopicName {
  readonly persistence: 'persistent' | 'non-persistent';
  readonly tenant: string;
  readonly namespace: string;
  readonly local: string;
  /** `persistent://tenant/namespace/local` */
  readonly full: string;
}

const FULL = /^(persistent|non-persistent):\/\/([A-Za-z0-9_.=-]+)\/([A-Za-z0-9_.=-]+)\/([A-Za-z0-9_.=:@-]+)$/;
const SHORT = /^(request|response|notify|flow):([A-Za-z0-9_.=-]+):([A-Za-z0-9_.=:@-]+)$/;

/** Parse a topic in either form; returns an explanation instead of throwing. */
export function parseTopic(input: string): TopicName | { error: string } {
  if (input.includes('://')) {
    const m = FULL.exec(input);
    if (!m) {
      return { error: `malformed topic "${input}": expected persistent://tenant/namespace/topic or non-persistent://tenant/namespace/topic` };
    }
    const [, persistence, tenant, namespace, local] = m as unknown as [string, TopicName['persistence'], string, string, string];
    return { persistence, tenant, namespace, local, full: input };
  }
  const s = SHORT.exec(input);
  if (!s) {
    return {
      error: `malformed topic "${input}": expected a full name (persistent://...) or class:topicspace:topic with class request, response, notify or flow`,
    };
  }
  const [, cls, space, topic] = s as unknown as [string, string, string, string];
  const persistence = cls === 'flow' ? 'persistent' : 'non-persistent';
  return { persistence, tenant: space, namespace: cls, local: topic, full: `${persistence}://${space}/${cls}/${topic}` };
}

/** True for a persistent topic in either form; false for a non-persistent or malformed one. */
export function isPersistentTopic(topic: string): boolean {
  const t = parseTopic(topic);
  return !('error' in t) && t.persistence === 'persistent';
}

/**
 * Where agents say they stopped waiting for requests of a request topic's namespace: one
 * non-persistent topic per namespace, read by every worker on a subscription of its own. Our
 * extension; TrustGraph's agents never cancel. Undefined for a malformed topic.
 */
export function cancelTopic(requestTopic: string): string | undefined {
  const t = parseTopic(requestTopic);
  return 'error' in t ? undefined : `non-persistent://${t.tenant}/${t.namespace}/toolwire-cancel`;
}

/** The persistent twin of a full topic name (dead letters must outlive their readers' absence). */
export function persistentTopic(full: string): string {
  return full.startsWith('non-persistent://') ? `persistent://${full.slice('non-persistent://'.length)}` : full;
}

/** `persistent/tenant/ns/topic`, each part URL-encoded, from a full or short topic name: the REST and WebSocket paths' form. */
export function topicPath(topic: string): string {
  const t = parseTopic(topic);
  if ('error' in t) throw new ConfigError([t.error]);
  return [t.persistence, t.tenant, t.namespace, t.local].map(encodeURIComponent).join('/');
}
