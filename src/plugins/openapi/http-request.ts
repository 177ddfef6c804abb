import { FormData } from 'undici';
import { InvalidArgumentsError } from '../../errors.js';
import { ownValue } from '../../plain-object.js';
import type { OpenApiToolOptions } from './openapi-options.js';

/** A request ready to send, before auth. */
export interface HttpRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body: string | FormData | undefined;
}

/** A value on the wire: text as is, anything structured as JSON. */
function wireText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === undefined) return String(value);
  return JSON.stringify(value);
}

/** A value for the URL or a header: a lone surrogate has no UTF-8 (encodeURIComponent throws, URLSearchParams writes U+FFFD). */
function urlText(argument: string, value: unknown): string {
  const text = wireText(value);
  if (/\p{Cs}/u.test(text)) throw new InvalidArgumentsError(`argument ${argument}: holds a lone UTF-16 surrogate, which no URL or header can carry`);
  return text;
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function isJsonMedia(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

function appendField(form: URLSearchParams | FormData, name: string, value: unknown): void {
  // Arrays are repeated fields, the common reading of both encodings.
  for (const item of Array.isArray(value) ? value : [value]) if (present(item)) form.append(name, wireText(item));
}

function bodyOf(
  options: OpenApiToolOptions,
  args: Readonly<Record<string, unknown>>,
): { body: string | FormData | undefined; contentType: string | undefined } {
  const spec = options.body;
  if (!spec) return { body: undefined, contentType: undefined };
  const media = spec['media-type'];
  let value: unknown;
  if (spec.argument) {
    value = ownValue(args, spec.argument);
  } else {
    const fields: Record<string, unknown> = {};
    for (const b of options.parameters) if (b.in === 'body' && present(ownValue(args, b.argument))) fields[b.name] = args[b.argument];
    value = Object.keys(fields).length ? fields : undefined;
  }
  if (!present(value)) return { body: undefined, contentType: undefined };
  if (isJsonMedia(media)) return { body: JSON.stringify(value), contentType: media };
  if (media === 'application/x-www-form-urlencoded' || media === 'multipart/form-data') {
    if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentsError(`the request body must be an object of form fields`);
    // FormData sets its own content type, with the boundary.
    const form = media === 'multipart/form-data' ? new FormData() : new URLSearchParams();
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) appendField(form, k, v);
    return form instanceof FormData ? { body: form, contentType: undefined } : { body: form.toString(), contentType: media };
  }
  return { body: wireText(value), contentType: media };
}

/**
 * The HTTP request for one tool call: path parameters substituted and encoded (so a value
 * can never leave its segment or reach another host), query, headers and cookies, and the
 * body in the operation's media type. Arguments were coerced by the worker already.
 */
export function buildRequest(server: string, options: OpenApiToolOptions, args: Readonly<Record<string, unknown>>): HttpRequest {
  let path = options.path;
  const query: [string, string][] = [];
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const b of options.parameters) {
    // Own values only: an argument named `toString` that the model left out has none.
    const v = ownValue(args, b.argument);
    if (b.in === 'body') continue;
    if (b.in === 'path') {
      if (!present(v) || v === '') throw new InvalidArgumentsError(`argument ${b.argument} is required (it is part of the path)`);
      const segment = urlText(b.argument, v);
      // URLs read `.` and `..` (encoded or not) as steps through the path: never a value.
      if (segment === '.' || segment === '..')
        throw new InvalidArgumentsError(`argument ${b.argument}: ${JSON.stringify(segment)} is not a path segment value`);
      path = path.replaceAll(`{${b.name}}`, encodeURIComponent(segment));
      continue;
    }
    if (!present(v)) continue;
    if (b.in === 'query') {
      if (Array.isArray(v) && b.explode) for (const item of v) query.push([b.name, urlText(b.argument, item)]);
      else query.push([b.name, Array.isArray(v) ? v.map((item) => urlText(b.argument, item)).join(',') : urlText(b.argument, v)]);
    } else if (b.in === 'header') {
      const text = urlText(b.argument, v);
      if (/[\r\n\0]/.test(text)) throw new InvalidArgumentsError(`argument ${b.argument}: a header value cannot hold line breaks`);
      // undici's own rule, checked here: refused at send time it read as a retriable "cannot reach".
      if (/[^\t\x20-\x7e\x80-\xff]/.test(text)) throw new InvalidArgumentsError(`argument ${b.argument}: a header value can hold only tabs and Latin-1 text`);
      headers[b.name.toLowerCase()] = text;
    } else {
      cookies.push(`${encodeURIComponent(b.name)}=${encodeURIComponent(urlText(b.argument, v))}`);
    }
  }
  // The operation's path is appended to the server's as text and parsed once as a whole:
  // never resolved against it, so a path that starts with `//` stays on the server's host.
  const url = new URL(`${server.endsWith('/') ? server.slice(0, -1) : server}${path}`);
  for (const [k, v] of query) url.searchParams.append(k, v);
  if (cookies.length) headers['cookie'] = cookies.join('; ');
  const { body, contentType } = bodyOf(options, args);
  if (contentType) headers['content-type'] = contentType;
  return { method: options.method.toUpperCase(), url, headers, body };
}
