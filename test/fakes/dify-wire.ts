/**
 * The Dify plugin daemon's wire format, written the way the daemon (Go) writes it: compact,
 * `<`, `>` and `&` escaped as \u003c..., absent meta as null. Go's json.Marshal keeps a
 * struct's fields in declared order and sorts only a map's keys: the envelope
 * (`{code, message, data}`), a chunk (`{type, message, meta}`) and the daemon's own error
 * (`{message, error_type, args}`) are structs; a chunk's message and meta, and an error the
 * plugin raised (`{args, error_type, message}`, passed on as the plugin wrote it), are maps.
 * Checked against the real daemon at bdb5642a (docs/dify-agent-strategies.md §10). Shared by
 * the fake daemon and the fake slim binary's fixtures.
 */

/** A number the daemon sends as a float: written `1.0`, not `1`. */
export class Float {
  constructor(readonly value: number) {}
}
export const float = (n: number): Float => new Float(n);

/** A Go struct: written with its fields in declared order (a plain object is a map: sorted). */
export class GoStruct {
  constructor(readonly fields: Record<string, unknown>) {}
}
export const goStruct = (fields: Record<string, unknown>): GoStruct => new GoStruct(fields);

function goString(s: string): string {
  return JSON.stringify(s)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Go's json.Marshal: a map[string]any (a plain object) with sorted keys, a GoStruct in field order, compact. */
export function goJson(v: unknown): string {
  if (v instanceof Float) return Number.isInteger(v.value) ? `${v.value}.0` : String(v.value);
  if (v === null || v === undefined) return 'null';
  if (v instanceof GoStruct) {
    const keys = Object.keys(v.fields).filter((k) => v.fields[k] !== undefined);
    return `{${keys.map((k) => `${goString(k)}:${goJson(v.fields[k])}`).join(',')}}`;
  }
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v as Record<string, unknown>)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${goString(k)}:${goJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  if (typeof v === 'string') return goString(v);
  return JSON.stringify(v);
}

export interface WireMessage {
  type: string;
  message: Record<string, unknown>;
  meta?: Record<string, unknown> | null;
}

/** The success envelope around one invoke message (entities.Response around a ToolResponseChunk: both structs). */
export function envelope(msg: WireMessage): string {
  return goJson(goStruct({ code: 0, message: 'success', data: goStruct({ type: msg.type, message: msg.message, meta: msg.meta ?? null }) }));
}

export const text = (t: string): WireMessage => ({ type: 'text', message: { text: t } });
export const link = (url: string): WireMessage => ({ type: 'link', message: { text: url } });
export const image = (url: string): WireMessage => ({ type: 'image', message: { text: url } });
export const json = (o: unknown, suppress?: boolean): WireMessage => ({
  type: 'json',
  message: suppress === undefined ? { json_object: o } : { json_object: o, suppress_output: suppress },
});
export const variable = (name: string, value: unknown): WireMessage => ({
  type: 'variable',
  message: { variable_name: name, variable_value: value, stream: false },
});
export const log = (label: string, status: string, data: Record<string, unknown>): WireMessage => ({
  type: 'log',
  message: { id: 'log-1', label, parent_id: null, error: null, status, data, metadata: null },
});

/** The SDK's chunking of a blob: 8 KiB pieces, sequence 0..n-1, then an empty end chunk numbered n. */
export function blobChunks(id: string, data: Buffer, meta: Record<string, unknown> | null, chunkBytes = 8192): WireMessage[] {
  const out: WireMessage[] = [];
  let seq = 0;
  for (let off = 0; off < data.length; off += chunkBytes) {
    out.push({
      type: 'blob_chunk',
      message: { id, sequence: seq++, total_length: data.length, blob: data.subarray(off, off + chunkBytes).toString('base64'), end: false },
      meta,
    });
  }
  out.push({ type: 'blob_chunk', message: { id, sequence: seq, total_length: data.length, blob: '', end: true }, meta });
  return out;
}

/** The daemon's own error object (PluginDaemonError, a struct: `{message, error_type, args}`) as JSON text. */
export function daemonErrorText(errorType: string, message: string, args: Record<string, unknown> | null = null): string {
  return goJson(goStruct({ message, error_type: errorType, args }));
}

/** An error the plugin raised, as the daemon passes it on (a map: `{args, error_type, message}`), as JSON text. */
export function pluginErrorText(errorType: string, message: string, args: Record<string, unknown> | null = null): string {
  return goJson({ args, error_type: errorType, message });
}

/**
 * A plugin's exception as the daemon streams it: the envelope's message is a
 * PluginInvokeError whose message is the plugin's own error (with its traceback), each as
 * JSON text inside a string: three levels of encoding.
 */
export function pluginErrorEnvelope(errorType: string, message: string, traceback: string): string {
  const inner = pluginErrorText(errorType, message, { traceback });
  return goJson(goStruct({ code: -500, message: daemonErrorText('PluginInvokeError', inner), data: null }));
}

/** An error the daemon itself raises mid-stream (e.g. `killed by timeout`). */
export function daemonErrorEnvelope(code: number, errorType: string, message: string): string {
  return goJson(goStruct({ code, message: daemonErrorText(errorType, message), data: null }));
}

export const TRACEBACK_SAMPLE = (secret: string): string =>
  `Traceback (most recent call last):\n  File "/app/tools/search.py", line 42, in _invoke\n    client = Client(api_key="${secret}")\nValueError: upstream refused`;
