import { randomUUID } from 'node:crypto';
import type { Subscription, Transport } from './transport.js';

/**
 * A subscription of this process's alone, to read every message of a topic (answers, config
 * pushes, cancels): a fresh name under `prefix`, so a broker's admin can tell whose it is;
 * Exclusive, so nobody shares it; and removed from the broker when it closes, so nothing of it
 * outlives the process's interest.
 */
export function privateSubscription(
  transport: Transport,
  topic: string,
  prefix: string,
  options: { readonly receiverQueueSize?: number; readonly signal?: AbortSignal } = {},
): Promise<Subscription> {
  return transport.subscribe(
    {
      topic,
      subscription: `${prefix}-${randomUUID()}`,
      type: 'Exclusive',
      ...(options.receiverQueueSize !== undefined ? { receiverQueueSize: options.receiverQueueSize } : {}),
      unsubscribeOnClose: true,
    },
    options.signal,
  );
}
