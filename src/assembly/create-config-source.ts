import type { Logger } from 'pino';
import type { Settings } from '../settings.js';
import type { Transport } from '../transport/transport.js';
import type { ConfigSource } from '../config/config-source.js';
import { DirectorySource } from '../config/directory-source.js';
import { TrustGraphSource } from '../config/trustgraph/trustgraph-source.js';

/** The worker's config source, as its settings choose. */
export function createConfigSource(settings: Settings, transport: Transport, log: Logger): ConfigSource {
  if (settings.configSource === 'trustgraph') {
    return new TrustGraphSource(transport, log, { workspace: settings.configWorkspace, queues: settings.configQueues, pollMs: settings.configPollMs });
  }
  return new DirectorySource(settings.configDir, log, settings.configPollMs);
}
