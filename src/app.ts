import type { Logger } from 'pino';
import { buildCatalog } from './catalog/build-catalog.js';
import type { Catalog } from './catalog/catalog.js';
import { DirectoryConfigStore } from './catalog/config-store.js';
import { ToolClient } from './client/tool-client.js';
import { HttpSurface } from './http/http-server.js';
import { defaultRegistry } from './plugins/default-registry.js';
import type { Plugin, PluginContext } from './plugins/plugin.js';
import type { PluginRegistry } from './plugins/registry.js';
import type { Secrets } from './secrets.js';
import type { Settings } from './settings.js';
import type { Transport } from './transport/transport.js';
import { Worker } from './worker/worker.js';

export interface AppDeps {
  readonly settings: Settings;
  readonly transport: Transport;
  readonly secrets: Secrets;
  readonly log: Logger;
  readonly registry?: PluginRegistry;
}

export interface App {
  readonly worker: Worker;
  readonly catalog: Catalog;
  readonly client: ToolClient;
  /** Where the HTTP surface listens, when it is on. */
  readonly http: { host: string; port: number } | undefined;
  /** Drain the worker, then close the HTTP surface, the client and the transport. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/** Load and validate descriptors with the plugins that will serve them. */
export async function loadCatalog(settings: Settings, registry: PluginRegistry, ctx: PluginContext): Promise<Catalog> {
  const store = new DirectoryConfigStore(settings.configDir);
  return buildCatalog(await store.entries(), registry, ctx);
}

/** Build and start everything a worker process runs, on a transport the caller made. */
export async function startApp(deps: AppDeps): Promise<App> {
  const { settings, transport, secrets, log } = deps;
  const registry = deps.registry ?? defaultRegistry();
  const ctx: PluginContext = { log: log.child({ component: 'plugins' }), configDir: settings.configDir, secrets, settings: settings.pluginSettings };
  const catalog = await loadCatalog(settings, registry, ctx);
  const plugins = new Map<string, Plugin>();
  for (const s of catalog.services.values()) {
    if (!s.plugin) continue;
    plugins.set(s.id, await registry.get(s.plugin.kind)!.create(s, { ...ctx, log: log.child({ component: 'plugin', service: s.id }) }));
  }
  const worker = new Worker({ transport, catalog, plugins, log: log.child({ component: 'worker' }), limits: settings.limits });
  await worker.start();
  const client = new ToolClient(transport, log.child({ component: 'client' }));
  let http: HttpSurface | undefined;
  let address: App['http'];
  if (settings.httpPort !== undefined) {
    http = new HttpSurface({ host: settings.httpHost, port: settings.httpPort, worker, transport, client, catalog: () => catalog, log: log.child({ component: 'http' }) });
    address = await http.start();
  }
  let stopping: Promise<void> | undefined;
  return {
    worker,
    catalog,
    client,
    http: address,
    stop(graceMs) {
      stopping ??= (async () => {
        // Stop accepting gateway calls first; running ones get the worker's grace to finish.
        const httpClosed = http?.close((graceMs ?? settings.limits.shutdownGraceMs) + 2000);
        await worker.stop(graceMs);
        await httpClosed;
        await client.close();
        await transport.close();
      })();
      return stopping;
    },
  };
}
