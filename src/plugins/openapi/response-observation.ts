import { RateLimitedError, ToolFailedError, UnauthorizedError, UnavailableError, type ToolwireError } from '../../errors.js';
import { isPlainObject } from '../../plain-object.js';
import { redact } from '../../redact.js';
import type { BlobSink } from '../blob-sink.js';

/** How much of an API's error text reaches the agent. */
export const ERROR_TEXT_MAX = 500;

/** A response as read: status, media type and the whole body (bounded by the client). */
export interface ReadResponse {
  readonly status: number;
  readonly statusText: string;
  readonly mediaType: string;
  readonly body: Buffer;
}

export function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** Media types an agent reads as text. */
function isText(mediaType: string): boolean {
  return (
    isJson(mediaType) ||
    mediaType.startsWith('text/') ||
    mediaType.endsWith('+xml') ||
    ['application/xml', 'application/javascript', 'application/yaml', 'application/x-yaml', 'application/x-www-form-urlencoded'].includes(mediaType)
  );
}

/** The message an API put in its error body (`message`, `error`, `detail`...), else the body's text. */
function apiMessage(response: ReadResponse): string {
  const text = response.body.toString('utf8');
  if (isJson(response.mediaType) || /^\s*[{[]/.test(text)) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isPlainObject(parsed)) {
        const err = parsed['error'];
        for (const v of [parsed['message'], isPlainObject(err) ? err['message'] : err, parsed['detail'], parsed['error_description'], parsed['title']]) {
          if (typeof v === 'string' && v.trim()) return v;
        }
      }
    } catch {
      // not JSON after all: the text is the message
    }
  }
  return text;
}

function bounded(text: string, secrets: readonly string[]): string {
  const one = redact(text.replace(/\s+/g, ' ').trim(), secrets);
  return one.length > ERROR_TEXT_MAX ? `${one.slice(0, ERROR_TEXT_MAX)}…` : one;
}

/**
 * The error an answer other than 2xx becomes: 401/403 `unauthorized`, 429 `rate-limited`,
 * 502/503/504 `unavailable` (the rate limit and 503 are retried before they get here), any
 * other 4xx or 5xx a `tool-service-error` with the API's own message, bounded, with every
 * secret this service sends masked (an API may echo a key it refused).
 */
export function responseError(response: ReadResponse, secrets: readonly string[]): ToolwireError {
  const message = bounded(apiMessage(response), secrets);
  const head = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const text = message ? `${head}: ${message}` : head;
  if (response.status === 401 || response.status === 403) return new UnauthorizedError(text);
  if (response.status === 429) return new RateLimitedError(text);
  if (response.status === 502 || response.status === 503 || response.status === 504) return new UnavailableError(text);
  return new ToolFailedError(text);
}

/**
 * A 2xx answer as observation text: JSON as its JSON text, text as text, no body said in
 * words, and anything else written to the file store and described (type, size, where).
 */
export async function responseText(response: ReadResponse, blobs: BlobSink, signal: AbortSignal): Promise<string> {
  if (response.body.length === 0) return `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}, no content`;
  if (isText(response.mediaType) || response.mediaType === '') return response.body.toString('utf8');
  const where = await blobs.store(response.body, { mimeType: response.mediaType, filename: undefined }, signal);
  return `[file: ${response.mediaType}, ${response.body.length} bytes, ${where}]`;
}

/** Retry-After as a wait in ms (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (!header) return undefined;
  const t = header.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
