import { z } from 'zod';
import { readResponse, type ToolResponse } from '../../envelope/response.js';
import { ErrorCode, ToolwireError } from '../../errors.js';
import { GATEWAY_ERROR } from '../../http/gateway-error.js';
import { loadSecrets } from '../../secrets.js';
import { parseJsonObject, UsageError } from '../args.js';
import { defineCommand, type Command, type CommandIo } from '../command.js';
import { readSseData } from '../../sse/sse-reader.js';

const HELP = `Usage: toolwire call <tool> [--args JSON] [--stream] [options]

Calls a tool as an agent does and prints its observation as it arrives. Exits 1 on an
error: an error response, a refusal of the gateway, no answer within --timeout-ms, each
printed to stderr as "<type>: <message>" (the types of docs/delivery.md).

By default it goes through a running worker's HTTP gateway (toolwire run). With
--pulsar-url or --transport it publishes the request on the broker itself, reading the
tool's topics and config values from the descriptors.

  -a, --args JSON        the tool's arguments (default {})
  -s, --stream           ask for a streamed answer (chunks printed as they come)
  -u, --user NAME        the user field older TrustGraph agents send
      --url URL          gateway base URL (default $TOOLWIRE_URL, else where 'toolwire run'
                         listens: $TOOLWIRE_HTTP_HOST:$TOOLWIRE_HTTP_PORT, 127.0.0.1:8787);
                         its bearer token is read from $TOOLWIRE_HTTP_TOKEN (a secret reference)
  -T, --transport KIND   pulsar | pulsar-ws | auto: go through the broker
      --pulsar-url URL   broker URL (implies --transport auto)
      --admin-url URL    broker admin/WebSocket URL
  -d, --config-dir DIR   descriptors (broker mode), default ./config
      --timeout-ms N     give up after N ms (default 600000, TrustGraph's client timeout)
`;

/** Prints an answer as it comes: text on stdout, errors on stderr; the exit code at the end. */
class AnswerPrinter {
  private ok = true;
  private wroteText = false;
  constructor(private readonly io: CommandIo) {}

  print(answer: ToolResponse): void {
    if (answer.error) {
      this.io.stderr.write(`${answer.error.type}: ${answer.error.message}\n`);
      this.ok = false;
      return;
    }
    if (answer.response === '') return;
    this.io.stdout.write(answer.response);
    this.wroteText = true;
  }

  /** Ends the printed text with a newline (none when nothing was printed); the exit code. */
  finish(): number {
    if (this.wroteText) this.io.stdout.write('\n');
    return this.ok ? 0 : 1;
  }
}

/**
 * Where the gateway is without --url: $TOOLWIRE_URL, else where `toolwire run` with the same
 * environment listens (TOOLWIRE_HTTP_HOST, TOOLWIRE_HTTP_PORT; a wildcard address is reached
 * on loopback).
 */
export function gatewayUrl(env: NodeJS.ProcessEnv): string {
  if (env['TOOLWIRE_URL']) return env['TOOLWIRE_URL'];
  const port = env['TOOLWIRE_HTTP_PORT'] || '8787';
  if (port === 'off') throw new UsageError('TOOLWIRE_HTTP_PORT is off: the worker has no gateway to call; give --url, or --pulsar-url to go through a broker');
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new UsageError(`TOOLWIRE_HTTP_PORT=${port} names no port to call (0 lets the worker pick one): give --url or TOOLWIRE_URL`);
  }
  let host = env['TOOLWIRE_HTTP_HOST'] || '127.0.0.1';
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '::' || host === '[::]') host = '[::1]';
  else if (host.includes(':') && !host.startsWith('[')) host = `[${host}]`;
  return `http://${host}:${port}`;
}

/** An error of the call, in the one shape every error is printed in: `<type>: <message>`. */
function fail(io: CommandIo, type: string, message: string): number {
  io.stderr.write(`${type}: ${message}\n`);
  return 1;
}

/** What a refusal's body may say; a proxy's page says neither, and its text is printed instead. */
const refusalBody = z
  .object({ error: z.string().optional().catch(undefined), type: z.string().optional().catch(undefined) })
  .catch({ error: undefined, type: undefined });

/** A refusal's body, `{"error", "type"?}`: its type where the gateway gave one, else the gateway's own, with the status. */
function refusal(status: number, text: string): { type: string; message: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const { error, type } = refusalBody.parse(body);
  const message = error ?? (text.trim() || 'no reason given');
  return type !== undefined ? { type, message } : { type: GATEWAY_ERROR, message: `${message} (HTTP ${status})` };
}

async function viaGateway(io: CommandIo, base: string, tool: string, body: unknown, timeoutMs: number, token: string | undefined): Promise<number> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([io.signal, timeout]);
  // Our own deadline passing is not the gateway failing: it may well have answered in part.
  const cutShort = (): number | undefined => {
    if (timeout.aborted) return fail(io, ErrorCode.Timeout, `no answer within ${timeoutMs} ms`);
    if (io.signal.aborted) return fail(io, ErrorCode.Aborted, 'the call was cancelled');
    return undefined;
  };
  let res: Response;
  try {
    res = await fetch(`${base.replace(/\/$/, '')}/v1/tools/${encodeURIComponent(tool)}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? `: ${((err as Error).cause as Error).message}` : '';
    return (
      cutShort() ??
      fail(
        io,
        ErrorCode.Unavailable,
        `cannot reach the toolwire gateway at ${base}: ${(err as Error).message}${cause} (is 'toolwire run' running? or use --pulsar-url to go through a broker)`,
      )
    );
  }
  if (!res.ok || !res.body) {
    const { type, message } = refusal(res.status, await res.text());
    return fail(io, type, message);
  }
  const printer = new AnswerPrinter(io);
  try {
    for await (const data of readSseData(res.body, signal)) {
      const event = gatewayEvent(data);
      if (typeof event === 'string') {
        printer.finish();
        return fail(io, GATEWAY_ERROR, event);
      }
      printer.print(event);
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  }
  const code = printer.finish();
  return cutShort() ?? code;
}

/** One event of the gateway's stream (a response in its wire shape), or why it cannot be read. */
function gatewayEvent(data: string): ToolResponse | string {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    return 'the gateway sent an event that is not JSON';
  }
  try {
    return readResponse(body);
  } catch (err) {
    if (!(err instanceof ToolwireError)) throw err;
    return `the gateway sent an event toolwire call cannot read: ${err.message}`;
  }
}

export const callCommand: Command = defineCommand({
  name: 'call',
  summary: 'call a tool as an agent does and print its observation',
  help: HELP,
  flags: {
    args: { type: 'string', short: 'a' },
    stream: { type: 'boolean', short: 's' },
    user: { type: 'string', short: 'u' },
    url: { type: 'string' },
    transport: { type: 'string', short: 'T' },
    'pulsar-url': { type: 'string' },
    'admin-url': { type: 'string' },
    'config-dir': { type: 'string', short: 'd' },
    'timeout-ms': { type: 'string' },
  },
  async run(io, { values, positionals }) {
    const tool = positionals[0];
    if (!tool) throw new UsageError('name the tool to call (see --help)');
    const args = parseJsonObject(values.args ?? '{}', '--args');
    const timeoutMs = Number(values['timeout-ms'] ?? 600_000);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError('--timeout-ms must be a positive number');

    const direct = values.transport !== undefined || values['pulsar-url'] !== undefined;
    if (!direct) {
      const body = { arguments: args, stream: values.stream === true, ...(values.user ? { user: values.user } : {}) };
      // The gateway's token, when it has one: the same secret reference the worker reads.
      const ref = io.env['TOOLWIRE_HTTP_TOKEN'];
      const token = ref ? loadSecrets(io.env, io.env['TOOLWIRE_SECRETS_FILE']).resolveOwn(ref) : undefined;
      return viaGateway(io, values.url ?? gatewayUrl(io.env), tool, body, timeoutMs, token);
    }

    // The broker path loads the worker's catalog code and a transport: only when asked for,
    // so that a call through the gateway starts in a fraction of the time.
    const [{ loadCatalog }, { ToolClient }, { createLogger }, { defaultRegistry }, { readWorkerSettings }, { openTransport }] = await Promise.all([
      import('../../assembly/app.js'),
      import('../../client/tool-client.js'),
      import('../../logging.js'),
      import('../../plugins/default-registry.js'),
      import('../../assembly/worker-settings.js'),
      import('../../assembly/open-transport.js'),
    ]);
    const env = { ...io.env };
    if (values['config-dir']) env['TOOLWIRE_CONFIG_DIR'] = values['config-dir'];
    if (values['pulsar-url']) env['PULSAR_URL'] = values['pulsar-url'];
    if (values['admin-url']) env['PULSAR_ADMIN_URL'] = values['admin-url'];
    env['TOOLWIRE_TRANSPORT'] = values.transport ?? 'auto';
    const settings = readWorkerSettings(env);
    const log = createLogger({ level: settings.logLevel === 'info' ? 'warn' : settings.logLevel });
    const catalog = await loadCatalog(settings, defaultRegistry(), {
      log,
      configDir: settings.configDir,
      secrets: loadSecrets(env, settings.secretsFile),
      settings: settings.pluginSettings,
    });
    const t = catalog.tools.get(tool);
    const service = t && catalog.services.get(t.service);
    if (!t || !service) throw new UsageError(`there is no tool named ${JSON.stringify(tool)} in ${settings.configDir}`);
    const transport = await openTransport(settings, log, io.signal);
    const client = new ToolClient(transport, log);
    const printer = new AnswerPrinter(io);
    let failed: ToolwireError | undefined;
    try {
      for await (const r of client.stream({
        requestQueue: service.requestQueue,
        responseQueue: service.responseQueue,
        config: { ...t.config },
        arguments: args,
        ...(values.user ? { user: values.user } : {}),
        stream: values.stream === true,
        timeoutMs,
        signal: io.signal,
      })) {
        printer.print(r);
      }
    } catch (err) {
      // No answer in time, a broken stream: said as an error answer is.
      if (!(err instanceof ToolwireError)) throw err;
      failed = err;
    } finally {
      await client.close();
      await transport.close();
    }
    const code = printer.finish();
    return failed ? fail(io, failed.code, failed.message) : code;
  },
});
