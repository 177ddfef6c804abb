import { AbortedError, TransportError, errorMessage } from '../errors.js';
import { parseTopic } from './topic-name.js';

/**
 * The one admin REST call the WebSocket transport needs. Pulsar 3.x's WebSocket consumer
 * ignores `subscriptionInitialPosition` (a new subscription always starts at latest), so a
 * subscription that must start at earliest is created here first; the socket then attaches
 * to it. Subscribing needs only consume permission on the topic, not admin rights.
 */
export async function createSubscriptionAtEarliest(
  httpBase: string,
  topic: string,
  subscription: string,
  token: string | undefined,
  signal?: AbortSignal,
): Promise<'created' | 'exists'> {
  const t = parseTopic(topic);
  if ('error' in t) throw new TransportError(t.error, { retriable: false });
  const path = [t.persistence, t.tenant, t.namespace, t.local].map(encodeURIComponent).join('/');
  const url = `${httpBase}/admin/v2/${path}/subscription/${encodeURIComponent(subscription)}`;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  let res: Response;
  try {
    // ledgerId/entryId -1 is MessageId.earliest.
    res = await fetch(url, { method: 'PUT', headers, body: '{"ledgerId":-1,"entryId":-1,"partitionIndex":-1}', signal: signal ?? null });
  } catch (err) {
    if (signal?.aborted) throw new AbortedError(`aborted creating subscription ${subscription} on ${topic}`, { cause: err });
    throw new TransportError(`pulsar admin: cannot create subscription ${subscription} on ${topic}: ${errorMessage(err)}`, { cause: err });
  }
  // 409: it already exists, and an existing subscription keeps its position (as initialPosition does).
  if (res.status === 409) {
    await res.body?.cancel();
    return 'exists';
  }
  if (res.ok) {
    await res.body?.cancel();
    return 'created';
  }
  const body = (await res.text().catch(() => '')).slice(0, 500);
  throw new TransportError(`pulsar admin: cannot create subscription ${subscription} on ${topic} at earliest: HTTP ${res.status} ${body}`, {
    retriable: res.status >= 500,
  });
}

/** `ws(s)://host:port` -> `http(s)://host:port` (the same web port serves admin and WebSocket). */
export function httpBaseOf(wsBase: string): string {
  return wsBase.replace(/^ws(s?):\/\//, 'http$1://');
}
