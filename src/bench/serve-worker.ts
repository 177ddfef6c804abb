import { startApp } from '../app.js';
import type { CommandIo } from '../cli/command.js';
import { createLogger } from '../logging.js';
import { loadSecrets } from '../secrets.js';
import { readSettings } from '../settings.js';
import { createTransport } from '../transport/create-transport.js';

/**
 * `toolwire bench serve-worker`: exactly what `toolwire run` composes (settings from the
 * environment, startApp, drain on SIGTERM), except that the transport comes from
 * createTransport. The bench and the drills use it only while `toolwire run` cannot open a
 * Pulsar transport yet (src/cli/open-transport.ts is memory-only until the lead wires it).
 */
export async function serveWorker(io: CommandIo): Promise<number> {
  const settings = readSettings(io.env);
  const secrets = loadSecrets(io.env, settings.secretsFile);
  const log = createLogger({ level: settings.logLevel, pretty: settings.logFormat === 'pretty', secrets: () => secrets.values() });
  const transport = await createTransport(
    settings.transport === 'memory'
      ? { kind: 'memory', log }
      : { kind: settings.transport, serviceUrl: settings.pulsarUrl, adminUrl: settings.pulsarAdminUrl, token: settings.pulsarToken, log },
  );
  let app;
  try {
    app = await startApp({ settings, transport, secrets, log });
  } catch (err) {
    await transport.close();
    throw err;
  }
  log.info({ transport: transport.kind, services: app.worker.served().map((s) => s.id), launcher: 'bench serve-worker' }, 'toolwire is serving');
  await new Promise<void>((resolve) => {
    if (io.signal.aborted) resolve();
    else io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  log.info('stop requested');
  await app.stop();
  log.flush?.();
  return 0;
}
