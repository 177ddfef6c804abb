import { stringify as losslessStringify } from 'lossless-json';
import { z } from 'zod';
import { ErrorCode, firstIssue, ToolFailedError, ToolwireError } from '../errors.js';

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

/**
 * A response as a tool service writes it (TrustGraph's ToolResponse), and as the gateway streams
 * it; checked once where it is read (zod adds ~50-80 ns to JSON.parse's ~500: bench/response-decode.ts).
 * A missing `response` is "", and only `end_of_stream: false` is not final.
 */
export const responseWire = z.object({
  error: z.object({ type: z.string().default(''), message: z.string().default('') }).nullish(),
  response: z.string().nullish(),
  end_of_stream: z.boolean().optional(),
});

/** A response already parsed from JSON, or a ToolFailedError naming the first field that is wrong. */
export function readResponse(body: unknown): ToolResponse {
  const read = responseWire.safeParse(body);
  if (!read.success) throw new ToolFailedError(`the response is malformed ${firstIssue(read.error)}`);
  return { error: read.data.error ?? null, response: read.data.response ?? '', endOfStream: read.data.end_of_stream !== false };
}

export function decodeResponse(data: Buffer): ToolResponse {
  return readResponse(JSON.parse(data.toString('utf8')));
}
