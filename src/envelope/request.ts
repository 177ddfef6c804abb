import { isUtf8 } from 'node:buffer';
import { InvalidRequestError, PayloadTooLargeError } from '../errors.js';
import { couldSpellProtoKey, parseAgentJson } from './agent-json.js';

/** A decoded tool request: what an agent asked for. */
export interface ToolRequest {
  /** The tool descriptor's values for the service's config-params. */
  readonly config: Record<string, unknown>;
  /** What the model supplied. */
  readonly arguments: Record<string, unknown>;
  /** Sent by TrustGraph 2.1-2.3 agents; passed on when present. */
  readonly user?: string;
}

export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

/**
 * Decode a request envelope `{"config": "<json>", "arguments": "<json>", "user"?: "..."}`.
 * `config` and `arguments` are JSON-encoded strings on the wire; an object is accepted too.
 * Unknown keys are ignored. Throws InvalidRequestError or PayloadTooLargeError.
 */
export function decodeRequest(data: Buffer, maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES): ToolRequest {
  if (data.length > maxPayloadBytes) {
    throw new PayloadTooLargeError(`request payload is ${data.length} bytes; the limit is ${maxPayloadBytes}`);
  }
  const text = data.toString('utf8');
  // Invalid bytes decode to U+FFFD: only text that has one pays for the check of every byte
  // (the character itself is valid, and rare in a request).
  if (text.includes('\uFFFD') && !isUtf8(data)) throw new InvalidRequestError('request payload is not valid UTF-8');
  // Fields parsed out of a plain envelope are plain too: one scan of the text serves them all.
  const plain = !couldSpellProtoKey(text);
  let body: unknown;
  try {
    body = parseAgentJson(text, plain);
  } catch (err) {
    throw new InvalidRequestError(`request payload is not JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError(`request payload must be a JSON object, got ${describe(body)}`);
  }
  const env = body as Record<string, unknown>;
  const user = env['user'];
  if (user !== undefined && user !== null && typeof user !== 'string') {
    throw new InvalidRequestError(`request field "user" must be a string, got ${describe(user)}`);
  }
  const request: { config: Record<string, unknown>; arguments: Record<string, unknown>; user?: string } = {
    config: decodeJsonObjectField(env, 'config', plain),
    arguments: decodeJsonObjectField(env, 'arguments', plain),
  };
  if (typeof user === 'string' && user !== '') request.user = user;
  return request;
}

/** `plain`: the envelope spelled no `__proto__` key, so neither does this field's text. */
function decodeJsonObjectField(env: Record<string, unknown>, field: string, plain: boolean): Record<string, unknown> {
  const raw = env[field];
  if (raw === undefined || raw === null || raw === '') return {};
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = parseAgentJson(raw, plain || undefined);
    } catch (err) {
      throw new InvalidRequestError(`request field "${field}" is not valid JSON: ${(err as Error).message}`);
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidRequestError(`request field "${field}" must encode a JSON object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Encode a request as an agent does (config and arguments double-encoded). */
export function encodeRequest(request: ToolRequest): Buffer {
  const env: Record<string, string> = {
    config: JSON.stringify(request.config),
    arguments: JSON.stringify(request.arguments),
  };
  if (request.user !== undefined) env['user'] = request.user;
  return Buffer.from(JSON.stringify(env), 'utf8');
}
