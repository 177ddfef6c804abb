import { startApp } from '../../assembly/app.js';
import { ConfigError } from '../../errors.js';
import { createLogger } from '../../logging.js';
import { startTracing } from '../../tracing/start-tracing.js';
import { loadSecrets } from '../../secrets.js';
import { settingSecrets } from '../../settings.js';
import { openTransport } from '../../assembly/open-transport.js';
import { settingOptions, settingsFromFlags } from '../setting-flags.js';
import { defineCommand, type Command } from '../command.js';

const HELP = `Usage: toolwire run [options]

Runs the worker: consumes every tool-service's request queue and answers through its plugin.
With no broker named it runs embedded (in-memory transport); the HTTP gateway then lets
'toolwire call' and curl reach the tools.

Options (each also an environment variable):
  -d, --config-dir DIR    descriptors directory            TOOLWIRE_CONFIG_DIR (./config)
      --config-source S   directory | trustgraph (TrustGraph's config service on the
                          broker)                          TOOLWIRE_CONFIG_SOURCE (directory)
  -w, --workspace W       TrustGraph workspace to read     TOOLWIRE_CONFIG_WORKSPACE (default)
  -T, --transport KIND    memory | pulsar | pulsar-ws | auto TOOLWIRE_TRANSPORT
                          (default: auto when a broker URL is set, else memory)
      --pulsar-url URL    pulsar://host:6650                PULSAR_URL
      --admin-url URL     http://host:8080 (admin, WebSocket) PULSAR_ADMIN_URL
      --bootstrap         create tenant tg and its namespaces first  TOOLWIRE_BOOTSTRAP=1
      --http-port N       HTTP surface port, 'off' to disable TOOLWIRE_HTTP_PORT (8787)
      --log-format F      json | pretty                     LOG_FORMAT (pretty on a terminal)
      --watch             development: when a module file is saved, import it again
                          and apply it as a live change (only the services of that module;
                          another file of its directory reloads the directory's modules):
                          calls in flight finish on the old code; a module that does not
                          load (a syntax error) or type check (with the project's own
                          typescript, when it has one) is refused, with where, and the
                          last good code keeps serving. Each save keeps one more copy of
                          the module's own files (ESM cannot unload them; a few KB).
Other settings: PULSAR_TOKEN, TOOLWIRE_CONCURRENCY, TOOLWIRE_SERVICE_CONCURRENCY,
TOOLWIRE_TIMEOUT_MS, TOOLWIRE_MAX_PAYLOAD_BYTES, TOOLWIRE_MAX_OBSERVATION_BYTES,
TOOLWIRE_MAX_REDELIVERIES, TOOLWIRE_NACK_DELAY_MS, TOOLWIRE_SHUTDOWN_GRACE_MS,
TOOLWIRE_CONFIG_POLL_MS, TOOLWIRE_SECRETS_FILE, LOG_LEVEL, and the plugins' DIFY_* / SLIM_*
settings (docs/configuration.md).

Descriptors are followed live: a change to the directory or in TrustGraph's config service
is validated whole and applied without a restart; an invalid one is refused (logged, in
/readyz and /metrics) and the last good catalog keeps serving.

SIGTERM or SIGINT: stop taking requests, let those in flight finish within the grace
period, nack the rest for another worker, close. A second signal exits at once.
`;

export const runCommand: Command = defineCommand({
  name: 'run',
  summary: 'run the worker (embedded by default, or on Pulsar)',
  help: HELP,
  flags: {
    ...settingOptions('config-dir', 'config-source', 'workspace', 'transport', 'pulsar-url', 'admin-url'),
    bootstrap: { type: 'boolean' },
    'http-port': { type: 'string' },
    'log-format': { type: 'string' },
    watch: { type: 'boolean' },
  },
  positionals: false,
  async run(io, { values }) {
    const { env, settings } = settingsFromFlags(io.env, values, {
      TOOLWIRE_BOOTSTRAP: values.bootstrap ? '1' : undefined,
      TOOLWIRE_HTTP_PORT: values['http-port'],
      LOG_FORMAT: values['log-format'],
    });
    const secrets = loadSecrets(env, settings.secretsFile);
    const fixedSecrets = settingSecrets(settings);
    const log = createLogger({
      level: settings.logLevel,
      pretty: settings.logFormat ? settings.logFormat === 'pretty' : Boolean((process.stderr as { isTTY?: boolean }).isTTY),
      secrets: () => [...secrets.values(), ...fixedSecrets],
    });
    const tracing = await startTracing(env, log);
    const transport = await openTransport(settings, log, io.signal);
    let app;
    try {
      app = await startApp({ settings, transport, secrets, log, signal: io.signal, watchModules: values.watch ?? false });
    } catch (err) {
      await transport.close();
      await tracing?.shutdown();
      if (err instanceof ConfigError) {
        io.stderr.write(`cannot start: ${err.problems.length} problem(s) in ${settings.configSource === 'directory' ? settings.configDir : 'the config'}\n`);
        for (const problem of err.problems) io.stderr.write(`  ${problem}\n`);
        return 1;
      }
      // Stopped while waiting for a config service that never answered.
      if (io.signal.aborted) return 0;
      throw err;
    }
    log.info(
      {
        transport: transport.kind,
        config: app.config().source,
        version: app.config().version,
        services: app.worker.served().map((service) => service.id),
        tools: [...app.catalog.tools.keys()],
        http: app.http ? `http://${app.http.host}:${app.http.port}` : 'off',
      },
      'toolwire is serving',
    );
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    log.info('stop requested');
    await app.stop();
    await tracing?.shutdown();
    log.flush?.();
    return 0;
  },
});
