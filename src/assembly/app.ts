import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import type { ConfigFollower, ConfigStatus } from '../config/config-follower.js';
import { DirectoryConfigStore } from '../config/directory-store.js';
import { ToolClient } from '../client/tool-client.js';
import { ConfigError } from '../errors.js';
import { HttpSurface } from '../http/http-server.js';
import { metricsInterceptor, WorkerMetrics } from '../metrics/worker-metrics.js';
import { defaultRegistry } from '../plugins/default-registry.js';
import { hasPlugin, type Plugin, type PluginContext } from '../plugins/plugin.js';
import { PluginFaultBoard } from '../plugins/plugin-faults.js';
import type { PluginRegistry } from '../plugins/registry.js';
import { ExecPolicy } from '../policy/exec-policy.js';
import type { Secrets } from '../secrets.js';
import type { Settings } from '../settings.js';
import type { Transport } from '../transport/transport.js';
import { tracingInterceptor } from '../worker/tracing-interceptor.js';
import { Worker } from '../worker/worker.js';
import { buildCatalog } from './build-catalog.js';
import { createConfigFollower } from './config-following.js';
import { fleetOn } from './fleet.js';
import { httpToken } from './http-token.js';

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

/** Load and validate the descriptors of the config directory with the plugins that will serve them. */
export async function loadCatalog(settings: Settings, registry: PluginRegistry, ctx: PluginContext): Promise<Catalog> {
  const store = new DirectoryConfigStore(settings.configDir);
  return buildCatalog(await store.entries(), registry, ctx, { policy: new ExecPolicy('directory', settings.execRules) });
}

/** The pieces of a worker process made before anything runs. */
interface Parts {
  readonly faults: PluginFaultBoard;
  readonly client: ToolClient;
  readonly metrics: WorkerMetrics;
  readonly follower: ConfigFollower;
  /** Makes a service's plugin, with a logger and event counts of its own. */
  readonly createPlugin: (service: ToolService) => Promise<Plugin | undefined>;
}

/** What the parts read of the running worker, once there is one; functions, handed on as they are. */
interface Live {
  /** The catalog being served: plugins call the fleet on it. */
  readonly served: () => Catalog | undefined;
  /** The plugin serving a service now, which a check of an unchanged service may ask. */
  readonly running: (serviceId: string) => Plugin | undefined;
}

/**
 * Build and start everything a worker process runs, on a transport the caller made. The
 * catalog follows the config source live: a valid change is applied without a restart.
 */
export async function startApp(deps: AppDeps): Promise<App> {
  const { settings, log } = deps;
  // Watching follows the modules descriptors name, before the policy rules on them: only the operator's directory may name them.
  if (deps.watchModules && settings.configSource !== 'directory') {
    throw new ConfigError([
      `run --watch watches modules of a config directory only, and TOOLWIRE_CONFIG_SOURCE is ${settings.configSource}: leave out --watch, or use TOOLWIRE_CONFIG_SOURCE=directory`,
    ]);
  }
  const token = httpToken(settings, deps.secrets);
  let first: Catalog | undefined;
  let worker: Worker | undefined;
  const parts = makeParts(deps, { served: () => worker?.current() ?? first, running: (id) => worker?.pluginOf(id) });
  let http: HttpSurface | undefined;
  let address: App['http'];
  try {
    // A directory is the operator's own: a bad one stops the start, where it is seen. A shared
    // config service may be fixed later: then the worker waits for a valid catalog.
    first = await parts.follower.start({ serveEmpty: settings.configSource === 'trustgraph', signal: deps.signal });
    worker = await Worker.create({
      transport: deps.transport,
      catalog: first,
      createPlugin: parts.createPlugin,
      log: log.child({ component: 'worker' }),
      limits: settings.limits,
      interceptors: (service) => [tracingInterceptor(), metricsInterceptor(parts.metrics.forService(service.id))],
      events: parts.metrics.workerEvents(),
    });
    const w = worker;
    parts.metrics.watch({ services: () => w.load(), transportConnected: () => deps.transport.connected, config: () => parts.follower.status() });
    // Bind before consuming: a port that cannot be had stops the start before any request is
    // taken off the broker (its /readyz says not-ready until the worker runs).
    if (settings.httpPort !== undefined) {
      http = httpSurface(deps, parts, w, settings.httpPort, token);
      address = await http.start();
    }
    await w.start(deps.signal);
  } catch (err) {
    // Unwind what this start made; the transport is the caller's until the start succeeds.
    await http?.close(0).catch(() => undefined);
    await worker?.stop(0);
    await parts.client.close().catch(() => undefined);
    await parts.follower.close();
    throw err;
  }
  const served = worker;
  parts.follower.follow(async (next) => {
    await served.apply(next);
  });
  return runningApp(deps, parts, served, http, address);
}

function makeParts(deps: AppDeps, live: Live): Parts {
  const { settings, secrets, log } = deps;
  const registry = deps.registry ?? defaultRegistry();
  const faults = new PluginFaultBoard();
  // What descriptors may make this worker execute: bounded by where they come from.
  const policy = new ExecPolicy(settings.configSource, settings.execRules);
  const client = new ToolClient(deps.transport, log.child({ component: 'client' }));
  const ctx: PluginContext = {
    log: log.child({ component: 'plugins' }),
    configDir: settings.configDir,
    // Which secrets descriptors may name: bounded by where they come from, as what they execute is.
    secrets: secrets.forOrigin(settings.configSource),
    settings: settings.pluginSettings,
    faults,
    policy,
    fleet: fleetOn(client, live.served),
  };
  // Recorded whether or not anything scrapes them (the HTTP surface serves them); Node's
  // process and event-loop metrics only where they can be read.
  const metrics = new WorkerMetrics({ processMetrics: settings.httpPort !== undefined });
  const follower = createConfigFollower(
    settings,
    deps.transport,
    log,
    (entries, previous) => buildCatalog(entries, registry, ctx, { policy, previous, running: live.running }),
    deps.watchModules,
  );
  const createPlugin = async (service: ToolService): Promise<Plugin | undefined> => {
    if (!hasPlugin(service)) return undefined;
    const factory = await registry.load(service.plugin.kind);
    return factory!.create(service, {
      ...ctx,
      log: log.child({ component: 'plugin', service: service.id }),
      events: metrics.pluginEvents(service.id, service.plugin.kind),
    });
  };
  return { faults, client, metrics, follower, createPlugin };
}

function httpSurface(deps: AppDeps, parts: Parts, worker: Worker, port: number, token: string | undefined): HttpSurface {
  const { settings } = deps;
  return new HttpSurface({
    host: settings.httpHost,
    port,
    worker,
    transport: deps.transport,
    client: parts.client,
    metrics: parts.metrics,
    catalog: () => worker.current(),
    config: () => parts.follower.status(),
    faults: () => parts.faults.list(),
    log: deps.log.child({ component: 'http' }),
    ...(token ? { token } : {}),
    browser: { allowedHosts: settings.httpAllowedHosts, allowedOrigins: settings.httpAllowedOrigins },
  });
}

function runningApp(deps: AppDeps, parts: Parts, worker: Worker, http: HttpSurface | undefined, address: App['http']): App {
  let stopping: Promise<void> | undefined;
  return {
    worker,
    get catalog() {
      return worker.current();
    },
    config: () => parts.follower.status(),
    onCatalogChange: (listener) => parts.follower.onApplied(listener),
    client: parts.client,
    http: address,
    stop(graceMs) {
      stopping ??= (async () => {
        // No reload once stopping; then stop accepting gateway calls; running ones get the
        // worker's grace to finish.
        await parts.follower.close();
        const httpClosed = http?.close((graceMs ?? deps.settings.limits.shutdownGraceMs) + 2000);
        await worker.stop(graceMs);
        await httpClosed;
        await parts.client.close();
        await deps.transport.close();
      })();
      return stopping;
    },
  };
}
