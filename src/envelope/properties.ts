/**
 * The message properties of the wire, beside the JSON body (envelope/request.ts, response.ts).
 * TrustGraph's own is `id`; the `toolwire-*` ones are our extensions, and TrustGraph's
 * clients ignore properties they do not know.
 */

/** Correlates a response with its request: the agent sets it, every answer message carries it back. */
export const ID_PROPERTY = 'id';

/**
 * The properties of a message answering request `id`. A literal with its key written out, as
 * the floor's: `{ [ID_PROPERTY]: id }` made a generic object of 56 bytes, not 32, and a slower
 * one. `satisfies` keeps the key in step with ID_PROPERTY.
 */
export function answerProperties(id: string): Record<string, string> {
  return { id } satisfies Record<typeof ID_PROPERTY, string>;
}

/** The message property an agent sets to ask for a streamed answer. */
export const STREAM_PROPERTY = 'toolwire-stream';
/**
 * On every message of a streamed answer: its place in the answer, from 0. A non-persistent
 * response topic may drop a message under load; a gap in the numbers is how an agent tells a
 * shortened answer from a whole one.
 */
export const SEQ_PROPERTY = 'toolwire-seq';
/** The message property naming a tool outright (used by our gateway and CLI). */
export const TOOL_PROPERTY = 'toolwire-tool';
/**
 * On a message of a namespace's cancel topic (cancelTopic): the id of a request whose agent
 * no longer waits. Every worker reads that topic; the one running the request aborts it.
 */
export const CANCEL_PROPERTY = 'toolwire-cancel';
/**
 * On a tool request an agent strategy makes (dify-agent): how many agent calls it is nested
 * in, counted up by one at each. Absent on an agent's own request: 0. See envelope/hops.ts.
 */
export const HOPS_PROPERTY = 'toolwire-hops';
/** Set on a dead-lettered request, saying why it could not be answered. */
export const DEAD_LETTER_REASON_PROPERTY = 'toolwire-dead-letter-reason';
