import type { ToolResponse } from '../../envelope/response.js';
import { loadSecrets } from '../../secrets.js';
import { parseJsonObject, UsageError } from '../args.js';
import { defineCommand, type Command, type CommandIo } from '../command.js';
import { readSseData } from '../../sse/sse-reader.js';

const HELP = `Usage: toolwire call <tool> [--args JSON] [--stream] [options]

Calls a tool as an agent does and prints its observation as it arrives. Exits 1 on an
error response (printed to stderr as "<type>: <message>").

By default it goes through a running worker's HTTP gateway (toolwire run). With
--pulsar-url or --transport it publishes the request on the broker itself, reading the
tool's topics and config values from the descriptors.

  -a, --args JSON        the tool's arguments (default {})
  -s, --stream           ask for a streamed answer (chunks printed as they come)
  -u, --user NAME        the user field older TrustGraph agents send
      --url URL          gateway base URL (default $TOOLWIRE_URL or http://127.0.0.1:8787);
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

async function viaGateway(io: CommandIo, base: string, tool: string, body: unknown, timeoutMs: number, token: string | undefined): Promise<number> {
  const signal = AbortSignal.any([io.signal, AbortSignal.timeout(timeoutMs)]);
  let res: Response;
  try {
    res = await fetch(`${base.replace(/\/$/, '')}/v1/tools/${encodeURIComponent(tool)}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    io.stderr.write(
      `cannot reach the toolwire gateway at ${base}: ${(err as Error).message}\n(is 'toolwire run' running? or use --pulsar-url to go through a broker)\n`,
    );
    return 1;
  }
  if (!res.ok || !res.body) {
    io.stderr.write(`gateway answered ${res.status}: ${await res.text()}\n`);
    return 1;
  }
  const printer = new AnswerPrinter(io);
  for await (const data of readSseData(res.body as unknown as AsyncIterable<Uint8Array>, signal)) {
    const r = JSON.parse(data) as { error: ToolResponse['error']; response: string; end_of_stream: boolean };
    printer.print({ error: r.error, response: r.response, endOfStream: r.end_of_stream });
  }
  return printer.finish();
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
      return viaGateway(io, values.url ?? io.env['TOOLWIRE_URL'] ?? 'http://127.0.0.1:8787', tool, body, timeoutMs, token);
    }

    // The broker path loads the worker's catalog code and a transport: only when asked for,
    // so that a call through the gateway starts in a fraction of the time.
    const [{ loadCatalog }, { ToolClient }, { createLogger }, { defaultRegistry }, { readSettings }, { openTransport }] = await Promise.all([
      import('../../assembly/app.js'),
      import('../../client/tool-client.js'),
      import('../../logging.js'),
      import('../../plugins/default-registry.js'),
      import('../../settings.js'),
      import('../../assembly/open-transport.js'),
    ]);
    const env = { ...io.env };
    if (values['config-dir']) env['TOOLWIRE_CONFIG_DIR'] = values['config-dir'];
    if (values['pulsar-url']) env['PULSAR_URL'] = values['pulsar-url'];
    if (values['admin-url']) env['PULSAR_ADMIN_URL'] = values['admin-url'];
    env['TOOLWIRE_TRANSPORT'] = values.transport ?? 'auto';
    const settings = readSettings(env);
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
    } finally {
      await client.close();
      await transport.close();
    }
    return printer.finish();
  },
});
