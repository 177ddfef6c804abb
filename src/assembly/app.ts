import type { Logger } from 'pino';
import { buildCatalog } from './build-catalog.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import { ConfigFollower, type ConfigStatus } from '../config/config-follower.js';
import { createConfigSource } from './create-config-source.js';
import { DirectoryConfigStore } from '../config/directory-store.js';
import { ToolClient } from '../client/tool-client.js';
import { ConfigError } from '../errors.js';
import { HttpSurface } from '../http/http-server.js';
import { defaultRegistry } from '../plugins/default-registry.js';
import { ModuleWatchSource } from '../plugins/module/module-watch-source.js';
import type { Plugin, PluginContext } from '../plugins/plugin.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { Secrets } from '../secrets.js';
import type { Settings } from '../settings.js';
import type { Transport } from '../transport/transport.js';
import { WorkerMetrics } from '../metrics/worker-metrics.js';
import { Worker } from '../worker/worker.js';
import { PluginFaultBoard } from '../plugins/plugin-faults.js';
import { ExecPolicy } from '../policy/exec-policy.js';
import { fleetOn } from './fleet.js';

export interface AppDeps {
  readonly settings: Settings;
  readonly transport: Transport;
  readonly secrets: Secrets;
  readonly log: Logger;
  readonly registry?: PluginRegistry;
  /** Aborts a start that waits (for a config service that does not answer yet). */
  readonly signal?: AbortSignal;
  /** `run --watch`: a changed module file is imported again and applied as a live change. */
  readonly watchModules?: boolean;
}

export interface App {
  readonly worker: Worker;
  /** The catalog being served now. */
  readonly catalog: Catalog;
  /** Where the catalog comes from, its version, and the last refused change. */
  config(): ConfigStatus;
  /** Calls `listener` after each live change of the catalog; returns how to stop. */
  onCatalogChange(listener: () => void): () => void;
  readonly client: ToolClient;
  /** Where the HTTP surface listens, when it is on. */
  readonly http: { host: string; port: number } | undefined;
  /** Drain the worker, then close the HTTP surface, the client and the transport. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

function resolveToken(ref: string, secrets: Secrets): string {
  const token = secrets.resolveOwn(ref);
  if (!token) throw new ConfigError([`TOOLWIRE_HTTP_TOKEN: the reference ${ref} does not resolve`]);
  return token;
}

/** Load and validate the descriptors of the config directory with the plugins that will serve them. */
export async function loadCatalog(settings: Settings, registry: PluginRegistry, ctx: PluginContext): Promise<Catalog> {
  const store = new DirectoryConfigStore(settings.configDir);
  return buildCatalog(await store.entries(), registry, ctx, { policy: new ExecPolicy('directory', settings.execRules) });
}

/**
 * Build and start everything a worker process runs, on a transport the caller made. The
 * catalog follows the config source live: a valid change is applied without a restart.
 */
export async function startApp(deps: AppDeps): Promise<App> {
  const { settings, transport, secrets, log } = deps;
  // Watching follows the modules descriptors name, before the policy rules on them: only the operator's directory may name them.
  if (deps.watchModules && settings.configSource !== 'directory') {
    throw new ConfigError([`run --watch watches modules of a config directory only, and TOOLWIRE_CONFIG_SOURCE is ${settings.configSource}: leave out --watch, or use TOOLWIRE_CONFIG_SOURCE=directory`]);
  }
  const registry = deps.registry ?? defaultRegistry();
  const httpToken = settings.httpToken ? resolveToken(settings.httpToken, secrets) : undefined;
  const faults = new PluginFaultBoard();
  // What descriptors may make this worker execute: bounded by where they come from.
  const policy = new ExecPolicy(settings.configSource, settings.execRules);
  const client = new ToolClient(transport, log.child({ component: 'client' }));
  // Plugins call the fleet on the catalog being served (the worker's once it runs).
  let served: () => Catalog | undefined = () => undefined;
  const fleet = fleetOn(client, () => served());
  const ctx: PluginContext = { log: log.child({ component: 'plugins' }), configDir: settings.configDir, secrets, settings: settings.pluginSettings, faults, policy, fleet };
  // Recorded whether or not anything scrapes them (the HTTP surface serves them); Node's
  // process and event-loop metrics only where they can be read.
  const metrics = new WorkerMetrics({ processMetrics: settings.httpPort !== undefined });
  // The plugin last made for each service: a check whose service is unchanged may ask it.
  const made = new Map<string, Plugin>();
  const createPlugin = async (s: ToolService): Promise<Plugin | undefined> => {
    if (!s.plugin) return undefined;
    return registry.get(s.plugin.kind)!.create(s, { ...ctx, log: log.child({ component: 'plugin', service: s.id }), events: metrics.pluginEvents(s.id, s.plugin.kind) });
  };
  const source = createConfigSource(settings, transport, log.child({ component: 'config' }));
  const follower = new ConfigFollower({
    source: deps.watchModules ? new ModuleWatchSource(source, settings.configDir, log.child({ component: 'watch' })) : source,
    build: (entries, previous) => buildCatalog(entries, registry, ctx, { policy, previous, running: (id) => made.get(id) }),
    log: log.child({ component: 'config' }),
  });
  const plugins = new Map<string, Plugin>();
  let http: HttpSurface | undefined;
  let address: App['http'];
  let worker: Worker;
  try {
    // A directory is the operator's own: a bad one stops the start, where it is seen. A shared
    // config service may be fixed later: then the worker waits for a valid catalog.
    const catalog = await follower.start({ serveEmpty: settings.configSource === 'trustgraph', signal: deps.signal });
    served = () => catalog;
    for (const s of catalog.services.values()) {
      const p = await createPlugin(s);
      if (p) plugins.set(s.id, p);
    }
    for (const [id, p] of plugins) made.set(id, p);
    const w = new Worker({ transport, catalog, plugins, log: log.child({ component: 'worker' }), limits: settings.limits, metrics });
    worker = w;
    served = () => w.current();
    metrics.watch({ services: () => w.load(), transportConnected: () => transport.connected, config: () => follower.status() });
    // Bind before consuming: a port that cannot be had stops the start before any request is
    // taken off the broker (its /readyz says not-ready until the worker runs).
    if (settings.httpPort !== undefined) {
      http = new HttpSurface({
        host: settings.httpHost,
        port: settings.httpPort,
        worker: w,
        transport,
        client,
        metrics,
        catalog: () => w.current(),
        config: () => follower.status(),
        faults: () => faults.list(),
        log: log.child({ component: 'http' }),
        ...(httpToken ? { token: httpToken } : {}),
        browser: { allowedHosts: settings.httpAllowedHosts, allowedOrigins: settings.httpAllowedOrigins },
      });
      address = await http.start();
    }
    await w.start(deps.signal);
  } catch (err) {
    // Unwind what this start made; the transport is the caller's until the start succeeds.
    await http?.close(0).catch(() => undefined);
    for (const [id, p] of plugins) await p.close?.().catch((e: unknown) => log.warn({ err: e, service: id }, 'plugin close failed'));
    await client.close().catch(() => undefined);
    await follower.close();
    throw err;
  }
  follower.follow(async (next) => {
    // Recorded once the apply commits: a failed one closes what it made, and the old plugins serve on.
    const fresh = new Map<string, Plugin>();
    await worker.apply(next, async (s) => {
      const p = await createPlugin(s);
      if (p) fresh.set(s.id, p);
      return p;
    });
    for (const [id, p] of fresh) made.set(id, p);
    for (const id of made.keys()) if (!next.services.has(id)) made.delete(id);
  });
  let stopping: Promise<void> | undefined;
  return {
    worker,
    get catalog() {
      return worker.current();
    },
    config: () => follower.status(),
    onCatalogChange: (listener) => follower.onApplied(listener),
    client,
    http: address,
    stop(graceMs) {
      stopping ??= (async () => {
        // No reload once stopping; then stop accepting gateway calls; running ones get the
        // worker's grace to finish.
        await follower.close();
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
