import { stringify as losslessStringify } from 'lossless-json';
import { ErrorCode, ToolwireError } from '../errors.js';
import { jsonText } from '../plain-object.js';

/** The error object of a response. `type` is one of ErrorCode's values. */
export interface WireError {
  readonly type: string;
  readonly message: string;
}

/** A decoded response message, as an agent sees it. */
export interface ToolResponse {
  readonly error: WireError | null;
  readonly response: string;
  readonly endOfStream: boolean;
}

/**
 * `{"error":null,"response":"...","end_of_stream":true}`. Built by hand: the only part
 * that needs escaping is the text, so one JSON.stringify of a string does it.
 */
export function encodeChunk(text: string, endOfStream: boolean): Buffer {
  return Buffer.from(`{"error":null,"response":${JSON.stringify(text)},"end_of_stream":${endOfStream}}`, 'utf8');
}

/**
 * The one rule for a tool's value (a whole result or one streamed chunk) as observation text:
 * a string as it is; undefined and null as nothing (""); a Buffer as its UTF-8 text; anything
 * else as its JSON text, a BigInt as its digits; what JSON has no text for (a function) as nothing.
 */
export function observationText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === undefined || result === null) return '';
  if (Buffer.isBuffer(result)) return result.toString('utf8');
  try {
    return JSON.stringify(result) ?? '';
  } catch (err) {
    // JSON.stringify refuses a BigInt (a driver's id, a counter); lossless-json writes it whole.
    if (!(err instanceof TypeError)) throw err;
    try {
      return losslessStringify(result) ?? '';
    } catch {
      throw err;
    }
  }
}

/**
 * The longest error text sent or logged, in UTF-16 units. Errors quote agent input (a config
 * value, an argument), and each layer of JSON escaping grows it: unbounded, an error frame can
 * outgrow the broker's limit and the request could then never be answered.
 */
export const MAX_ERROR_TEXT = 2000;

/** `text` cut to `max` units, saying how much was left out; never splits a surrogate pair. */
export function boundedText(text: string, max = MAX_ERROR_TEXT): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}... (${text.length - end} more characters)`;
}

/**
 * An error response; always final. Never `"error": {}` (TrustGraph reads it as an error with no
 * text). `type` is an ErrorCode, or the type a tool service answered with.
 */
export function encodeError(type: string, message: string): Buffer {
  const text = message === '' ? type : boundedText(message);
  return Buffer.from(`{"error":{"type":${JSON.stringify(type)},"message":${JSON.stringify(text)}},"response":"","end_of_stream":true}`, 'utf8');
}

/**
 * How the worker logs an error it answers: `expected` (a ToolwireError: the agent's input, the
 * tool's own failure) at info, `internal` (anything else: a fault of the worker or a plugin) at error.
 */
export const ErrorSeverity = {
  Expected: 'expected',
  Internal: 'internal',
} as const;
export type ErrorSeverity = (typeof ErrorSeverity)[keyof typeof ErrorSeverity];

/** An error as the worker answers it: its wire form, and how it is logged. */
export interface AnsweredError extends WireError {
  readonly severity: ErrorSeverity;
}

/**
 * The wire form of any error. Only ToolwireErrors carry their own text: anything else is
 * an internal fault, and its message (which may hold paths or secrets) stays in the log.
 */
export function wireError(err: unknown): AnsweredError {
  if (err instanceof ToolwireError) return { type: err.code, message: boundedText(err.message), severity: ErrorSeverity.Expected };
  return { type: ErrorCode.ToolFailed, message: 'internal error in the tool worker', severity: ErrorSeverity.Internal };
}

export function decodeResponse(data: Buffer): ToolResponse {
  const body = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
  const e = body['error'] as Record<string, unknown> | null | undefined;
  const error: WireError | null = e && typeof e === 'object' ? { type: jsonText(e['type']), message: jsonText(e['message']) } : null;
  const r = body['response'];
  return {
    error,
    response: typeof r === 'string' ? r : r === undefined || r === null ? '' : JSON.stringify(r),
    endOfStream: body['end_of_stream'] !== false,
  };
}
