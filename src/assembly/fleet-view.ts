import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import { ToolClient } from '../client/tool-client.js';
import { defaultRegistry } from '../plugins/default-registry.js';
import type { Secrets } from '../secrets.js';
import type { Settings } from '../settings.js';
import type { Transport } from '../transport/transport.js';
import { startApp } from './app.js';
import { buildCatalog } from './build-catalog.js';
import { createConfigFollower } from './config-following.js';

/** The fleet as `mcp serve` offers it: its catalog, followed live, and a client that calls its tools as an agent does. */
export interface FleetView {
  catalog(): Catalog;
  /** Calls `listener` after each change of the catalog; returns how to stop listening. */
  onCatalogChange(listener: () => void): () => void;
  readonly client: ToolClient;
  /** Stops following, then closes the client and the transport (the embedded worker too). */
  close(): Promise<void>;
}

export interface FleetViewDeps {
  readonly settings: Settings;
  readonly transport: Transport;
  readonly secrets: Secrets;
  readonly log: Logger;
  readonly signal?: AbortSignal;
}

/**
 * On the embedded transport the fleet is this process: a worker runs here, with no HTTP
 * surface of its own. On a broker the catalog is the fleet's config, built without the
 * plugins' machine-bound checks (those are the workers' business), and calls go to whichever
 * worker serves each tool.
 */
export async function openFleetView(deps: FleetViewDeps): Promise<FleetView> {
  const { settings, transport, secrets, log } = deps;
  if (transport.kind === 'memory') {
    const app = await startApp({ settings: { ...settings, httpPort: undefined }, transport, secrets, log, signal: deps.signal });
    return { catalog: () => app.catalog, onCatalogChange: (listener) => app.onCatalogChange(listener), client: app.client, close: () => app.stop() };
  }
  const registry = defaultRegistry();
  const ctx = { log, configDir: settings.configDir, secrets, settings: settings.pluginSettings };
  const follower = createConfigFollower(settings, transport, log, (entries) => buildCatalog(entries, registry, ctx, { portable: true }));
  let current: Catalog = await follower.start({ serveEmpty: true, signal: deps.signal });
  follower.follow(async (catalog) => {
    current = catalog;
  });
  const client = new ToolClient(transport, log.child({ component: 'client' }));
  return {
    catalog: () => current,
    onCatalogChange: (listener) => follower.onApplied(listener),
    client,
    close: async () => {
      await follower.close();
      await client.close();
      await transport.close();
    },
  };
}
