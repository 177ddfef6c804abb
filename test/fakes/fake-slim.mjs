#!/usr/bin/env node
/* global process, Buffer, setInterval */
// A stand-in for dify-plugin-daemon's slim binary: the same flags, stdin payload, JSON Lines
// on stdout, {code,message} line on stderr and exit codes, in remote and local mode. What it
// does is chosen by the tool name in the payload. Each run records its argv, environment,
// stdin and pid to $TMPDIR/fake-slim-<checksum of -id>-<n>.json for the test to read.
//
// Its bytes follow what the real binary was seen to write (slim built from
// langgenius/dify-plugin-daemon at commit bdb5642a, local mode, a plugin on the dify_plugin
// 0.7.4 SDK, as the Dify fidelity issue reports it): in local mode a plugin error is an
// `error` event whose message is the SDK's JSON with empty args (no traceback), exit 0, no
// `done`; a chunk is the plugin's JSON compacted as Go writes it (<, > and & escaped), keys in
// the SDK's order, numbers as the plugin wrote them; a line the plugin prints on stdout becomes
// an `error` event quoting it; a missing plugin shows a `download` stage and, with no network,
// ends with PLUGIN_DOWNLOAD_ERROR, exit 3. In remote mode chunk lines carry the daemon's bytes,
// and an event line over 64 KiB ends the run with STREAM_READ_ERROR, exit 1, no `done`.
// Checked against that binary built locally (remote mode against a local HTTP server): it posts
// the stdin payload as is to /v2/invoke/dispatch/tool/invoke with X-Api-Key and
// X-Plugin-Unique-Identifier, writes {"event":"chunk","data":<the daemon's envelope, compacted
// and HTML-escaped, keys in the daemon's order>} then {"event":"done","data":null}. The daemon's
// order (seen from the real daemon at bdb5642a, docs/dify-agent-strategies.md §10): its envelope,
// a chunk and its own errors are Go structs (declared field order: {code, message, data},
// {type, message, meta}, {message, error_type, args}); maps, such as a chunk's message or the
// plugin's own error, are sorted.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(`-${name}`);
  return i === -1 ? undefined : argv[i + 1];
};
// Go's encoding/json escapes <, > and & in strings.
const goEscape = (text) => text.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
const out = (event, data) => process.stdout.write(`${goEscape(JSON.stringify({ event, data: data ?? null }))}\n`);
const fatal = (exit, code, message) => {
  process.stderr.write(`${JSON.stringify({ code, message })}\n`);
  process.exit(exit);
};

// Go's json.Marshal of a map: sorted keys, compact (the daemon's envelope in remote mode).
const goJson = (v) => {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
};
// A Go struct: fields in declared order, each value encoded as goJson does.
const goStruct = (fields) =>
  `{${Object.entries(fields)
    .map(([k, v]) => `${JSON.stringify(k)}:${typeof v === 'function' ? v() : goJson(v)}`)
    .join(',')}}`;
// An error the plugin raised (a map, sorted) and the daemon's own (a struct).
const errText = (type, message, args = null) => goJson({ args, error_type: type, message });
const daemonErrText = (type, message, args = null) => goStruct({ message, error_type: type, args });
const envelopeOf = (code, message, data) => goStruct({ code, message, data: typeof data === 'function' ? data : () => goJson(data) });

const id = flag('id');
const action = flag('action');
if (!id || !action) fatal(2, 'INVALID_INPUT', "usage: slim -id <id> -action <action> [-args '<json>'] [-config <path>]");

const stdin = readFileSync(0, 'utf8');
let payload;
try {
  payload = JSON.parse(stdin);
} catch (e) {
  fatal(2, 'INVALID_ARGS_JSON', String(e.message));
}

const mode = process.env.SLIM_MODE || 'remote';
const checksum = id.split('@')[1] || 'none';
let n = 1;
while (existsSync(join(tmpdir(), `fake-slim-${checksum}-${n}.json`))) n++;
writeFileSync(
  join(tmpdir(), `fake-slim-${checksum}-${n}.json`),
  JSON.stringify({ argv, env: process.env, stdin, pid: process.pid, cwd: process.cwd(), uid: process.getuid?.(), attempt: n }),
);

if (mode === 'remote') {
  if (!process.env.SLIM_DAEMON_ADDR) fatal(2, 'CONFIG_INVALID', 'remote.daemon_addr is required');
  if (!process.env.SLIM_DAEMON_KEY) fatal(2, 'CONFIG_INVALID', 'remote.daemon_key is required');
} else if (mode === 'local') {
  if (!process.env.SLIM_FOLDER) fatal(2, 'CONFIG_INVALID', 'local.folder is required');
  if (payload?.data?.tool === 'missing_plugin') {
    // Not unpacked here: slim tries the marketplace first; with no network that ends the run.
    // As the real binary wrote it (checked against slim built from bdb5642a): keys sorted (a Go map).
    out('message', { message: `downloading plugin ${id} from marketplace`, stage: 'download' });
    fatal(
      3,
      'PLUGIN_DOWNLOAD_ERROR',
      `marketplace request failed: Get "https://marketplace.dify.ai/api/v1/plugins/download?unique_identifier=${encodeURIComponent(id)}": dial tcp: lookup marketplace.dify.ai: no such host`,
    );
  }
  // Progress comes once the plugin is found and its runtime built.
  out('message', { message: 'initializing python environment', stage: 'init' });
  out('message', { message: 'python environment ready', stage: 'init' });
} else {
  fatal(2, 'UNKNOWN_MODE', mode);
}

const tool = payload?.data?.tool;
const secret = Object.values(payload?.data?.credentials ?? {})[0] ?? '';
const traceback = `Traceback (most recent call last):\n  File "/plugin/tools/t.py", line 9, in _invoke\n    login("${secret}")\nRuntimeError: refused`;

// One invoke message: raw in local mode, inside the daemon's envelope in remote mode.
const message = (type, body, meta = null) => {
  const msg = { type, message: body, meta };
  if (mode === 'local') out('chunk', msg);
  else process.stdout.write(`{"event":"chunk","data":${goEscape(envelopeOf(0, 'success', () => goStruct(msg)))}}\n`);
};
const pluginError = (type, text) => {
  if (mode === 'local') {
    // Slim turns the plugin's error into an error event, exits 0 and sends no done; the SDK
    // sends no traceback in local mode.
    out('error', { code: 'PLUGIN_EXEC_ERROR', message: errText(type, text, {}) });
    process.exit(0);
  }
  const envelope = envelopeOf(-500, daemonErrText('PluginInvokeError', errText(type, text, { traceback })), null);
  process.stdout.write(`{"event":"chunk","data":${envelope}}\n`);
  out('done');
  process.exit(0);
};
const blob = (id, size) => {
  const data = Buffer.alloc(size, 0x61);
  let seq = 0;
  for (let off = 0; off < size; off += 8192) {
    // The SDK's key order: id, sequence, total_length, blob, end.
    message(
      'blob_chunk',
      { id, sequence: seq++, total_length: size, blob: data.subarray(off, off + 8192).toString('base64'), end: false },
      { mime_type: 'text/plain' },
    );
  }
  message('blob_chunk', { id, sequence: seq, total_length: size, blob: '', end: true }, { mime_type: 'text/plain' });
};

switch (tool) {
  case 'echo':
    message('text', { text: `echo ${JSON.stringify(payload.data.tool_parameters)}` });
    out('done');
    break;
  case 'two_parts':
    message('text', { text: 'part one, ' });
    message('json', { json_object: { n: 2 } });
    message('text', { text: 'part two' });
    out('done');
    break;
  case 'blob':
    blob('b10b10b10b10b10b10b10b10b10b10b1', 20000);
    out('done');
    break;
  case 'cut_blob':
    message(
      'blob_chunk',
      { blob: Buffer.alloc(100).toString('base64'), end: false, id: 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', sequence: 0, total_length: 200 },
      null,
    );
    out('done');
    break;
  case 'plugin_error':
    pluginError('ValueError', `the upstream said no to ${secret}`);
    break;
  case 'validation_error':
    pluginError('ValidationError', 'query: field required');
    break;
  case 'credential_error':
    pluginError('ToolProviderCredentialValidationError', 'invalid key');
    break;
  case 'rate_limited':
    if (n === 1) pluginError('InvokeRateLimitError', 'rate limit exceeded');
    message('text', { text: `ok after ${n} tries` });
    out('done');
    break;
  case 'markup':
    message('text', { text: '<b>bold</b> & done' });
    out('done');
    break;
  case 'big_number':
    // The plugin's digits, written through as they came (no double on the way).
    if (mode === 'local') process.stdout.write('{"event":"chunk","data":{"type":"json","message":{"json_object":{"big":12345678901234567891}},"meta":null}}\n');
    else
      process.stdout.write(
        '{"event":"chunk","data":{"code":0,"data":{"message":{"json_object":{"big":12345678901234567891}},"meta":null,"type":"json"},"message":"success"}}\n',
      );
    out('done');
    break;
  case 'prints_stdout':
    // A plugin that prints to stdout breaks the SDK's line protocol; slim says so and exits 0.
    out('error', { code: 'PLUGIN_EXEC_ERROR', message: "invalid character 'd' looking for beginning of value, original response: debug: calling upstream" });
    process.exit(0);
    break;
  case 'huge_line':
    // Remote mode: an SSE line over bufio.Scanner's 64 KiB.
    fatal(1, 'STREAM_READ_ERROR', 'bufio.Scanner: token too long');
    break;
  case 'no_done':
    message('text', { text: 'started' });
    break;
  case 'exit_1':
    fatal(1, 'PLUGIN_EXEC_ERROR', errText('RuntimeError', 'plugin crashed', { traceback }));
    break;
  case 'exit_1_not_found':
    fatal(1, 'PLUGIN_NOT_FOUND', `plugin ${id} not found in marketplace (https://marketplace.dify.ai)`);
    break;
  case 'exit_2':
    fatal(2, 'INVALID_ARGS_JSON', 'unexpected end of JSON input');
    break;
  case 'exit_3':
    fatal(3, 'NETWORK_ERROR', 'Post "http://daemon:5002/v2/invoke/dispatch/tool/invoke": dial tcp 10.0.0.5:5002: connect: connection refused');
    break;
  case 'exit_4_unauthorized':
    fatal(4, 'DAEMON_ERROR', `status 401: ${envelopeOf(-401, daemonErrText('PluginDaemonUnauthorizedError', 'unauthorized'), null)}`);
    break;
  case 'exit_4_not_found':
    fatal(4, 'DAEMON_ERROR', `status 404: ${envelopeOf(-404, daemonErrText('PluginNotFoundError', 'plugin not found'), null)}`);
    break;
  case 'exit_4_rate_limited':
    if (n === 1) fatal(4, 'DAEMON_ERROR', 'status 429: too many requests');
    message('text', { text: 'through' });
    out('done');
    break;
  case 'hang':
    // A local plugin that calls back into Dify: nothing answers, it waits.
    message('text', { text: 'thinking...' });
    setInterval(() => undefined, 1000);
    break;
  case 'hang_ignore_term':
    process.on('SIGTERM', () => undefined);
    message('text', { text: 'stubborn...' });
    setInterval(() => undefined, 1000);
    break;
  default:
    pluginError('ValueError', `Tool \`${tool}\` not found for provider \`${payload?.data?.provider}\``);
}
