/**
 * What an operator is told when the broker will not let the worker in, in the same words on
 * every transport: what it refused, where, and which setting or grant mends it.
 */
export type BrokerOperation = 'consume' | 'produce';

export const NOT_AUTHENTICATED =
  'not authenticated: the broker did not accept the credentials (check PULSAR_TOKEN, PULSAR_TOKEN_FILE or the PULSAR_OAUTH2_ settings; an expired token?)';

export function notAuthorized(operation: BrokerOperation, topic: string): string {
  return `not authorized to ${operation} on ${namespaceOf(topic)}: grant the worker's role that permission (toolwire pulsar bootstrap --worker-role, docs/pulsar.md)`;
}

/** `tenant/namespace` of a full topic name. */
function namespaceOf(topic: string): string {
  const m = /^[a-z-]+:\/\/([^/]+\/[^/]+)\//.exec(topic);
  return m?.[1] ?? topic;
}
