/**
 * The gateway's own error type, never a worker's: its last event when the call could not be
 * made through the broker at all, and what `toolwire call` says of a refusal that names no
 * type of the taxonomy (a missing token, a Host the surface does not answer to). Its own
 * file, so a client reads it without loading the gateway.
 */
export const GATEWAY_ERROR = 'gateway-error';
