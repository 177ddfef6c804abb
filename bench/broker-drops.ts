import type { PulsarAdminClient } from '../src/pulsar/admin-client.js';
import { isPersistentTopic } from '../src/transport/topic-name.js';

/**
 * Messages a non-persistent topic took in and handed to none of its subscriptions, by the
 * broker's own counters: where a lost request was lost. The broker drops a message for a
 * consumer with no room or a connection it cannot write to, and nothing on the client side
 * sees it. Undefined for a persistent topic (it keeps what it cannot hand out) or when the
 * stats cannot be read.
 */
export async function droppedAtBroker(admin: PulsarAdminClient, topic: string, signal?: AbortSignal): Promise<number | undefined> {
  if (isPersistentTopic(topic)) return undefined;
  const stats = await admin.topicStats(topic, signal).catch(() => undefined);
  if (!stats) return undefined;
  const subscriptions = Object.values(stats.subscriptions);
  // Each subscription gets its own copy: with more than one, in less out per copy is not a count.
  if (subscriptions.length !== 1) return undefined;
  return stats.msgInCounter - (subscriptions[0]!.msgOutCounter ?? 0);
}

/** The two topics of a scenario: requests the worker never got, answers the agents never got. */
export interface BrokerDrops {
  readonly requests: number | undefined;
  readonly answers: number | undefined;
}

export async function scenarioDrops(admin: PulsarAdminClient, topics: { readonly requestTopic: string; readonly responseTopic: string }): Promise<BrokerDrops> {
  const [requests, answers] = await Promise.all([droppedAtBroker(admin, topics.requestTopic), droppedAtBroker(admin, topics.responseTopic)]);
  return { requests, answers };
}
