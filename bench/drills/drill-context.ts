import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { adminOf, type BrokerEndpoints } from '../transport-for.js';
import type { DrillForm } from './drill-result.js';

/** What every drill gets from its runner. */
export interface DrillContext {
  readonly broker: BrokerEndpoints;
  /** The transport of the drill's agents and workers. */
  readonly transport: 'pulsar-ws' | 'pulsar';
  readonly form: DrillForm;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** One line of progress for the person watching. */
  readonly say: (line: string) => void;
}

/** A drill service's id and its two topics. */
export interface DrillTopics {
  readonly id: string;
  readonly requestTopic: string;
  readonly responseTopic: string;
}

/** The id and queues of a service spec on a drill's topics. */
export function onTopics(t: DrillTopics): { id: string; requestQueue: string; responseQueue: string } {
  return { id: t.id, requestQueue: t.requestTopic, responseQueue: t.responseTopic };
}

/** Fresh names for one drill run; requests on a persistent topic unless told otherwise. */
export function drillTopics(drill: string, persistentResponses: boolean, persistentRequests = true): DrillTopics {
  const id = `drill-${drill}-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  return {
    id,
    requestTopic: persistentRequests ? `persistent://tg/flow/${id}-request` : `non-persistent://tg/request/${id}`,
    responseTopic: persistentResponses ? `persistent://tg/response/${id}` : `non-persistent://tg/response/${id}`,
  };
}

/** Delete what a drill made on a shared broker (best effort). */
export async function removeTopics(broker: BrokerEndpoints, topics: readonly string[]): Promise<void> {
  const admin = adminOf(broker);
  for (const t of topics) await admin.deleteTopic(t).catch(() => undefined);
}

/** Send many messages with a bound on unconfirmed sends (a broker is not a firehose). */
export async function sendAll<T>(items: readonly T[], send: (item: T) => Promise<void>, window = 256): Promise<number> {
  let failures = 0;
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++]!;
      await send(item).catch(() => failures++);
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, items.length) }, lane));
  return failures;
}
