import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import { ConfigFollower } from '../config/config-follower.js';
import type { ConfigSource } from '../config/config-source.js';
import type { ConfigEntry } from '../config/config-store.js';
import { DirectorySource } from '../config/directory-source.js';
import { TrustGraphSource } from '../config/trustgraph/trustgraph-source.js';
import { ModuleWatchSource } from '../plugins/module/module-watch-source.js';
import type { Settings } from '../settings.js';
import type { Transport } from '../transport/transport.js';

/** The config source a process reads, as its settings choose. */
export function createConfigSource(settings: Settings, transport: Transport, log: Logger): ConfigSource {
  if (settings.configSource === 'trustgraph') {
    return new TrustGraphSource(transport, log, { workspace: settings.configWorkspace, queues: settings.configQueues, pollMs: settings.configPollMs });
  }
  return new DirectorySource(settings.configDir, log, settings.configPollMs);
}

/**
 * What follows that source, building each version with `build`. `watchModules` (`run --watch`)
 * also reads a change of a module file that a descriptor names as a change of the config.
 */
export function createConfigFollower(
  settings: Settings,
  transport: Transport,
  log: Logger,
  build: (entries: readonly ConfigEntry[], previous: Catalog | undefined) => Promise<Catalog>,
  watchModules = false,
): ConfigFollower {
  const source = createConfigSource(settings, transport, log.child({ component: 'config' }));
  return new ConfigFollower({
    source: watchModules ? new ModuleWatchSource(source, settings.configDir, log.child({ component: 'watch' })) : source,
    build,
    log: log.child({ component: 'config' }),
  });
}
