import { isPlainObject } from '../../plain-object.js';

/**
 * What a Dify error says once unwrapped. Errors come in three shapes: the daemon's envelope
 * `{code, message, data}` (in the stream, or as an HTTP error body), whose message is JSON
 * `{error_type, message, args}`, nested again while the type is PluginInvokeError; the flat
 * `{error_type, message}` that dify-agent expects; and plain text.
 */
export interface DifyError {
  /** The innermost error type (a Python exception class or a daemon error name). */
  readonly errorType: string;
  /** The innermost message, without any traceback. */
  readonly message: string;
  /** Error types from outermost to innermost. */
  readonly chain: readonly string[];
  /** A traceback found on the way; for the log only. */
  readonly traceback: string | undefined;
  /** The envelope's code: a number (-500...) or, on an unknown route, a string. */
  readonly code: number | string | undefined;
  readonly httpStatus: number | undefined;
}

const MAX_DEPTH = 8;
const TRACEBACK_MARK = 'Traceback (most recent call last)';

/** Daemon envelope codes, for a message that is not JSON. */
const CODE_TYPES: Record<number, string> = {
  [-400]: 'PluginDaemonBadRequestError',
  [-401]: 'PluginDaemonUnauthorizedError',
  [-404]: 'PluginNotFoundError',
  [-500]: 'PluginDaemonInternalServerError',
};

const STATUS_TYPES: Record<number, string> = {
  400: 'PluginDaemonBadRequestError',
  401: 'PluginDaemonUnauthorizedError',
  404: 'PluginNotFoundError',
  429: 'RateLimitError',
  500: 'PluginDaemonInternalServerError',
};

function parseObject(text: string): Record<string, unknown> | undefined {
  const t = text.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

/** A message that carries its own traceback keeps only what comes before it. */
function splitTraceback(message: string): { message: string; traceback: string | undefined } {
  const at = message.indexOf(TRACEBACK_MARK);
  if (at === -1) return { message, traceback: undefined };
  return { message: message.slice(0, at).trim(), traceback: message.slice(at) };
}

interface Acc {
  chain: string[];
  traceback: string | undefined;
}

function fromErrorObject(errorObject: Record<string, unknown>, acc: Acc, depth: number): { errorType: string; message: string } {
  const errorType = text(errorObject['error_type']) || 'UnknownError';
  acc.chain.push(errorType);
  const args = errorObject['args'];
  if (isPlainObject(args) && typeof args['traceback'] === 'string') acc.traceback ??= args['traceback'];
  const raw = text(errorObject['message']);
  if (depth < MAX_DEPTH) {
    const inner = parseObject(raw);
    if (inner && typeof inner['error_type'] === 'string' && (errorType === 'PluginInvokeError' || errorType === 'UnknownError')) {
      return fromErrorObject(inner, acc, depth + 1);
    }
  }
  const split = splitTraceback(raw);
  acc.traceback ??= split.traceback;
  return { errorType, message: split.message };
}

/** Unwrap an error message string (the envelope's message, or slim's error event message). */
export function unwrapErrorMessage(message: string, fallbackType: string, extra: { code?: number | string; httpStatus?: number } = {}): DifyError {
  const acc: Acc = { chain: [], traceback: undefined };
  const inner = parseObject(message);
  let result: { errorType: string; message: string };
  if (inner && typeof inner['error_type'] === 'string') result = fromErrorObject(inner, acc, 1);
  else {
    const split = splitTraceback(message);
    acc.traceback = split.traceback;
    acc.chain.push(fallbackType);
    result = { errorType: fallbackType, message: split.message };
  }
  return { ...result, chain: acc.chain, traceback: acc.traceback, code: extra.code, httpStatus: extra.httpStatus };
}

/**
 * Unwrap any error body the daemon (or something in front of it) may send: the envelope,
 * the flat form, or text. `httpStatus` is set for errors that came instead of a stream.
 */
export function unwrapDifyError(body: unknown, httpStatus?: number): DifyError {
  const fallback =
    (httpStatus !== undefined ? STATUS_TYPES[httpStatus] : undefined) ?? (httpStatus !== undefined ? `HTTP${httpStatus}` : 'PluginDaemonInternalServerError');
  const obj = typeof body === 'string' ? (parseObject(body) ?? body) : body;
  if (isPlainObject(obj)) {
    if (typeof obj['error_type'] === 'string') {
      const acc: Acc = { chain: [], traceback: undefined };
      const r = fromErrorObject(obj, acc, 1);
      return { ...r, chain: acc.chain, traceback: acc.traceback, code: undefined, httpStatus };
    }
    if ('code' in obj) {
      const code = obj['code'];
      if (typeof code === 'string') {
        // An unknown route: the server's router answered, not the plugin machinery.
        return unwrapErrorMessage(text(obj['message']) || code, 'PluginDaemonRouteNotFound', { code, httpStatus });
      }
      const numeric = typeof code === 'number' ? code : undefined;
      const byCode = numeric !== undefined ? CODE_TYPES[numeric] : undefined;
      return unwrapErrorMessage(text(obj['message']), byCode ?? fallback, { code: numeric, httpStatus });
    }
    if (typeof obj['message'] === 'string' || typeof obj['error'] === 'string') {
      return unwrapErrorMessage(text(obj['message'] ?? obj['error']), fallback, { httpStatus });
    }
  }
  return unwrapErrorMessage(text(obj).trim() || (httpStatus !== undefined ? `HTTP status ${httpStatus}` : 'unknown error'), fallback, { httpStatus });
}
