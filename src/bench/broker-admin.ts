import { TransportError, errorMessage } from '../errors.js';
import { parseTopic } from '../transport/topic-name.js';
import type { BrokerEndpoints } from './transport-for.js';

/**
 * The few admin REST calls the bench and drills need beyond src/pulsar/admin.ts: the
 * broker's version for the report, topic stats for counting, and deleting the topics a run
 * made, so a shared broker does not collect them.
 */
async function call(broker: BrokerEndpoints, method: string, path: string, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = {};
  if (broker.token) headers['authorization'] = `Bearer ${broker.token}`;
  try {
    return await fetch(`${broker.adminUrl.replace(/\/+$/, '')}${path}`, { method, headers, signal: signal ?? AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new TransportError(`pulsar admin ${method} ${path}: ${errorMessage(err)}`, { cause: err });
  }
}

function topicPath(topic: string): string {
  const t = parseTopic(topic);
  if ('error' in t) throw new TransportError(t.error, { retriable: false });
  return `/admin/v2/${t.persistence}/${encodeURIComponent(t.tenant)}/${encodeURIComponent(t.namespace)}/${encodeURIComponent(t.local)}`;
}

/** The broker's version string, or `unknown`. */
export async function brokerVersion(broker: BrokerEndpoints): Promise<string> {
  try {
    const res = await call(broker, 'GET', '/admin/v2/brokers/version');
    return res.ok ? (await res.text()).replace(/"/g, '').trim() : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Delete a topic and its subscriptions; a topic that does not exist is fine. */
export async function deleteTopic(broker: BrokerEndpoints, topic: string): Promise<void> {
  const res = await call(broker, 'DELETE', `${topicPath(topic)}?force=true`);
  await res.body?.cancel();
  if (!res.ok && res.status !== 404) throw new TransportError(`pulsar admin: cannot delete ${topic}: HTTP ${res.status}`);
}

export interface TopicStats {
  readonly msgInCounter: number;
  readonly subscriptions: Readonly<Record<string, { readonly msgBacklog: number; readonly consumers: readonly unknown[] }>>;
}

/** Topic stats, or undefined when the topic does not exist. */
export async function topicStats(broker: BrokerEndpoints, topic: string, signal?: AbortSignal): Promise<TopicStats | undefined> {
  const res = await call(broker, 'GET', `${topicPath(topic)}/stats`, signal);
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (!res.ok) throw new TransportError(`pulsar admin: stats of ${topic}: HTTP ${res.status}`);
  return (await res.json()) as TopicStats;
}
